dat_path = 'rec_g0_t0.imec0.ap.bin'
n_channels_dat = 385
dtype = 'int16'
offset = 0
sample_rate = 30000.0
hp_filtered = False
