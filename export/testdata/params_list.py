dat_path = ['C:\\data\\a.bin', 'it\'s.bin']
n_channels_dat = 4
dtype = 'float32'
offset = 1024
sample_rate = 15000.0
hp_filtered = False
