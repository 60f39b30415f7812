"""Failures raise the package's exceptions with the library's message, error name and KB id."""

import pytest

import gpupeer
from conftest import data


def test_missing_snapshot_is_not_found_naming_the_file(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(gpupeer.NotFoundError) as info:
        gpupeer.load_snapshot(missing)
    e = info.value
    assert isinstance(e, gpupeer.GpupeerError) and isinstance(e, LookupError)
    assert "nope.json" in e.message
    assert e.code_name == "not-found"
    assert e.location.startswith("src/"), e.location


def test_malformed_snapshot_is_a_parse_error_naming_the_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "schema": "gpupeer.snapshot",\n  "gpus": [ oops ]\n}\n')
    with pytest.raises(gpupeer.ParseError) as info:
        gpupeer.load_snapshot(bad)
    assert isinstance(info.value, ValueError)
    assert "bad.json" in str(info.value)
    assert "bad.json:3:" in str(info.value), str(info.value)  # file:line:column


def test_topology_without_gpus_is_unsupported_with_the_reason():
    snap = gpupeer.load_snapshot(data("snapshot_h200_2gpu_captured.json"))
    snap["gpus"], snap["pairs"], snap["deviceCount"] = [], [], 0
    with pytest.raises(gpupeer.UnsupportedError, match="no NVIDIA GPU visible") as info:
        gpupeer.topology(snap)
    assert info.value.code_name == "unsupported"


def test_a_snapshot_dict_is_checked_like_a_file():
    snap = gpupeer.load_snapshot(data("snapshot_h200_2gpu_captured.json"))
    snap["gpus"] = []
    with pytest.raises(gpupeer.ParseError, match=r"pairs\[0\]"):
        gpupeer.topology(snap)


def test_wrong_argument_types_raise_type_errors_naming_the_argument():
    with pytest.raises(gpupeer.ArgumentTypeError, match="snapshot"):
        gpupeer.topology(42)
    with pytest.raises(TypeError, match="text_or_path"):
        gpupeer.explain(b"bytes are not text")
    with pytest.raises(ValueError, match="top"):
        gpupeer.explain("x", top=-1)
    with pytest.raises(ValueError, match="size_mib"):
        gpupeer.check(size_mib=0)


def test_explain_with_a_missing_kb_directory_names_it(tmp_path):
    with pytest.raises(gpupeer.GpupeerError) as info:
        gpupeer.explain("anything", kb_dirs=[tmp_path / "no-such-kb"])
    assert "no-such-kb" in str(info.value)


@pytest.mark.parametrize("path", ["package", "ctypes"])
def test_a_failed_call_hands_back_its_error_record(path):
    # A null communicator reaches the C API's own check (no GPU needed), through the entry the
    # package uses for eager calls (gpupeer._fastcall where built) and through ctypes.
    from gpupeer import _lib, communicator

    call, target = (communicator._call, communicator._RUN) if path == "package" else (
        _lib._through_ctypes, _lib.lib.gpupeer_comm_run)
    slot = _lib.ErrorSlot()
    code = call(target, None, 0, None, None, 1, 0, 0, 0, None, slot.address)
    assert code == gpupeer.InvalidArgumentError.code
    with pytest.raises(gpupeer.InvalidArgumentError, match="comm: the communicator is null") as info:
        slot.raise_for(code)
    assert info.value.location.startswith("src/c_api/"), info.value.location
    assert slot.cell.value is None  # the record was freed and the slot emptied


def test_the_eager_call_path_is_built_and_checks_its_arguments():
    from gpupeer import _lib

    if _lib._fastcall is None:
        pytest.skip("gpupeer._fastcall not built (no CPython headers): the package uses ctypes")
    with pytest.raises(TypeError, match="11 arguments"):
        _lib._fastcall.run10(1, 2)
    with pytest.raises(ValueError, match="no function"):
        _lib._fastcall.run10(None, *([0] * 10))


def test_every_error_class_maps_its_code():
    from gpupeer import errors

    for code, cls in errors.BY_CODE.items():
        assert cls.code == code
        e = cls("m", api_error="cudaErrorX", kb_id="kb-1")
        assert (e.message, e.api_error, e.kb_id) == ("m", "cudaErrorX", "kb-1")
        assert isinstance(e, gpupeer.GpupeerError)
