dat_path = []
n_channels_dat = 1
dtype = 'int16'
offset = 0
sample_rate = 2.5e+16
hp_filtered = False
