dat_path = 'temp_wh.dat'
n_channels_dat = 384
dtype = 'int16'
offset = 0
sample_rate = 30000.390639481
hp_filtered = True
