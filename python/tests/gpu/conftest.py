"""GPU tests: each module imports gpu_env first, which skips it with the reason where PyTorch or
a CUDA device is missing."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # python/, for gpupeer
sys.path.insert(0, os.path.dirname(HERE))  # python/tests, for recorder
