"""hiplint's built-in rules. One module per rule, one folder per family (the code prefix):

    warp/   WRP  warp size and lane masks
"""
