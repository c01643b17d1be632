"""Neural-network ops.

activations and the softmax cross-entropy, convolution (its kernels, checks and moves),
pooling and its windows, normalization, dropout, and the batching rules for NHWC images.
"""
