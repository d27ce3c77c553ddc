"""Neural-network building blocks as plain functions over parameter pytrees (no module objects):
initialisers, layers, attention and losses. A model is a function `f(params, x)`; `hj.jit` compiles it,
together with its loss, gradient and optimizer update, into one program.

    import hlojit as hj
    key = hj.random.key(0)
    params = hj.nn.init_dense(key, 784, 10)
    logits = hj.nn.dense(x, params["w"], params["b"])
    loss = hj.nn.softmax_cross_entropy(logits, labels)
"""
from . import initializers
from .attention import attention, dot_product_attention, init_attention
from .initializers import (compute_fans, glorot_normal, glorot_uniform, he_normal, he_uniform, kaiming_normal,
                           kaiming_uniform, lecun_normal, lecun_uniform, normal, ones, uniform, variance_scaling,
                           xavier_normal, xavier_uniform, zeros)
from .layers import (avg_pool, batch_norm, conv2d, dense, dropout, embedding, init_batch_norm, init_conv2d,
                     init_dense, init_embedding, layer_norm, max_pool)
from .losses import mse, softmax_cross_entropy
from ..frontend.ops import gelu, log_softmax, logsumexp, one_hot, relu, sigmoid, silu, softmax, softplus  # noqa

__all__ = [
    "initializers", "compute_fans", "variance_scaling", "glorot_uniform", "glorot_normal", "he_uniform",
    "he_normal", "lecun_uniform", "lecun_normal", "xavier_uniform", "xavier_normal", "kaiming_uniform",
    "kaiming_normal", "normal", "uniform", "zeros", "ones",
    "dense", "conv2d", "max_pool", "avg_pool", "batch_norm", "layer_norm", "dropout", "embedding",
    "attention", "dot_product_attention", "softmax_cross_entropy", "mse",
    "init_dense", "init_conv2d", "init_batch_norm", "init_embedding", "init_attention",
    "relu", "gelu", "silu", "sigmoid", "softplus", "softmax", "log_softmax", "logsumexp", "one_hot",
]
