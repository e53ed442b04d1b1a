def log_cudagraph_skip_and_bump_counter(msg):
    pass
