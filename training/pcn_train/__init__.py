"""Training pcn's own proof cost networks (docs/training.md).

Modules: ``data`` (self-play record files, 8-fold symmetries), ``model`` (the network of
docs/model-format.md), ``train`` (losses, optimiser, checkpoints, CSV log, plot),
``export`` (model.safetensors + model.json + golden vectors). Entry point:
``python -m pcn_train {train,export} ...``.
"""
