"""Hostile arguments to the Python API: refused by name before the library is called, never
cut to their C type without a word."""

import pytest

import gpupeer


def test_a_lone_surrogate_is_refused_by_name():
    with pytest.raises(gpupeer.InvalidArgumentError, match="position 1 is a lone surrogate"):
        gpupeer.explain("a\udc80b")
    with pytest.raises(gpupeer.InvalidArgumentError, match="position 2 cannot be part of a file name"):
        gpupeer.explain("x", kb_dirs=["kb\ud800"])


@pytest.mark.parametrize("call, name", [
    (lambda: gpupeer.init(2**32 + 5, 2**32 + 2, bytes(128)), "rank"),
    (lambda: gpupeer.init(0, 2**32 + 2, bytes(128)), "world_size"),
    (lambda: gpupeer.init(0, 2, bytes(128), timeout_ms=2**32 + 1), "timeout_ms"),
    (lambda: gpupeer.init(0, 2, bytes(128), device=-2**31 - 1), "device"),
    (lambda: gpupeer.init_with_all_gather(0, 2**40, lambda blob: [blob]), "world_size"),
    (lambda: gpupeer.Communicator([0, 2**32]), "devices"),
    (lambda: gpupeer.check(devices=[2**32 + 1]), "devices"),
    (lambda: gpupeer.explain("x", top=2**64), "top"),
    (lambda: gpupeer.check_ipc(2**40), "devices"),
])
def test_ints_past_the_c_type_are_refused_not_wrapped(call, name):
    with pytest.raises(gpupeer.InvalidArgumentError, match="^%s: .* is out of range" % name):
        call()


@pytest.mark.parametrize("call", [
    lambda: gpupeer.load_snapshot("a\0b"),
    lambda: gpupeer.doctor("snapshot.json\0ignored"),
    lambda: gpupeer.explain("x", kb_dirs=["kb\0"]),
])
def test_a_nul_byte_in_a_path_is_refused_not_cut(call):
    # C would read the name only up to the NUL: another file than the one named.
    with pytest.raises(gpupeer.InvalidArgumentError, match="a NUL byte at position \\d+ cannot be part of a file name"):
        call()


def test_one_kb_folder_given_as_a_string_is_refused(tmp_path):
    # Iterating a str would load one folder per letter.
    with pytest.raises(gpupeer.ArgumentTypeError, match="^kb_dirs: a list of KB folders, not one str"):
        gpupeer.explain("x", kb_dirs=str(tmp_path))
