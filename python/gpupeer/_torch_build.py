"""What ties gpupeer._torchcall to one torch build (python/csrc/build_torchcall.py writes it into the
module, _tensors compares it with the torch in the process). No imports: the build script loads
this file by its path, without the package and its library."""


def torch_build_id(torch):
    """torch's version and git revision: at::Tensor's layout and the C++ symbols follow them."""
    version = getattr(torch, "__version__", "?")
    return "%s %s" % (version, getattr(getattr(torch, "version", None), "git_version", "unknown"))
