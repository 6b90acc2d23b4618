"""stfile against Go's safetensors.Write: Go's files load verified, and
stfile.encode writes byte for byte what Go writes for the same tensors and
metadata (so vomc verifies stfile's checksum); any flipped byte is caught."""
from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import numpy as np
import pytest

from conftest import TESTDATA, reference
from vomc_torch import stfile

META: Dict[str, str] = reference("st_meta.json")  # quotes, backslash, "≤", emoji, <>&, control characters, U+2028


def go_tensors() -> List[Tuple[str, np.ndarray]]:
    """The tensors the generator writes (stTensors), in data order."""
    return [("w", (np.arange(6, dtype=np.float32) * 0.25 - 1).reshape(2, 3)),
            ("A.b", np.arange(4, dtype=np.float64) / 3),
            ("z_count", np.array(-7, dtype=np.int64)),
            ("empty", np.zeros((0, 5), dtype=np.float32))]


@pytest.mark.parametrize("name,meta", [("st_go.safetensors", META), ("st_go_nometa.safetensors", {})])
def test_load_go_file(name: str, meta: Dict[str, str]) -> None:
    """A file from Go's safetensors.Write loads with its checksum verified."""
    got_meta, arrays = stfile.load(str(TESTDATA / name))
    assert got_meta == meta
    want = go_tensors()
    assert list(arrays) == [n for n, _ in want]
    for n, a in want:
        assert arrays[n].dtype == a.dtype and arrays[n].shape == a.shape, n
        np.testing.assert_array_equal(arrays[n], a)


@pytest.mark.parametrize("name,meta", [("st_go.safetensors", META), ("st_go_nometa.safetensors", {})])
def test_encode_equals_go(name: str, meta: Dict[str, str]) -> None:
    """stfile.encode gives Go's bytes: canonical header (sorted keys, Go's
    escaping), checksum, padding and data."""
    assert stfile.encode(meta, go_tensors()) == (TESTDATA / name).read_bytes()


@pytest.mark.parametrize("s", ["", "plain", 'q"b\\', "<&>", "\u2028\u2029", "\x00\x1f\x7f", "\b\f\n\r\t", "≤😀"])
def test_go_json_str_parses_back(s: str) -> None:
    """go_json_str is valid JSON for the same string, with nothing HTML-special left raw."""
    j = stfile.go_json_str(s)
    assert json.loads(j) == s
    assert not any(c in j for c in "<>&\u2028\u2029")


def _header_len(b: bytes) -> int:
    return struct.unpack("<Q", b[:8])[0]


def _flip_data(b: bytearray) -> None:
    b[-40] ^= 0x01  # inside "A.b"


def _flip_meta_value(b: bytearray) -> None:
    i = b.index(b'"world"')
    b[i + 5] = ord("e")  # "worle": valid JSON, other metadata


def _flip_checksum(b: bytearray) -> None:
    i = b.index(stfile.CHECKSUM_KEY.encode()) + len(stfile.CHECKSUM_KEY) + 3
    b[i] = ord("0") if b[i] != ord("0") else ord("1")


def _flip_shape(b: bytearray) -> None:
    i = b.index(b'"shape":[2,3]')
    b[i + 9], b[i + 11] = ord("3"), ord("2")  # [3,2]: same size, other shape


def _truncate(b: bytearray) -> None:
    del b[-1]


def _append(b: bytearray) -> None:
    b.append(0)


def _bad_header_len(b: bytearray) -> None:
    b[:8] = struct.pack("<Q", len(b))


def _not_json(b: bytearray) -> None:
    b[8] = ord("[")


@pytest.mark.parametrize("mutate,match", [
    (_flip_data, "checksum"), (_flip_meta_value, "checksum"), (_flip_checksum, "checksum"),
    (_flip_shape, "checksum"), (_truncate, "truncated"), (_append, "describes"),
    (_bad_header_len, "header of"), (_not_json, "header"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_corruption_detected(tmp_path: Path, mutate: Callable[[bytearray], None], match: str) -> None:
    """One changed byte anywhere (data, metadata, checksum, shape) or a wrong
    length is a FormatError; the intact file loads."""
    b = bytearray((TESTDATA / "st_go.safetensors").read_bytes())
    p = tmp_path / "f.safetensors"
    p.write_bytes(bytes(b))
    stfile.load(str(p))
    mutate(b)
    p.write_bytes(bytes(b))
    with pytest.raises(stfile.FormatError, match=match):
        stfile.load(str(p))


def test_require_checksum(tmp_path: Path) -> None:
    """A file without vomc's checksum (another writer's) is refused unless
    require_checksum=False."""
    data = np.arange(3, dtype=np.float32).tobytes()
    header = json.dumps({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}}).encode()
    header += b" " * ((8 - len(header) % 8) % 8)
    p = tmp_path / "plain.safetensors"
    p.write_bytes(struct.pack("<Q", len(header)) + header + data)
    with pytest.raises(stfile.FormatError, match="no vomc.data_sha256"):
        stfile.load(str(p))
    meta, arrays = stfile.load(str(p), require_checksum=False)
    assert meta == {}
    np.testing.assert_array_equal(arrays["x"], [0, 1, 2])


def test_encode_refuses_reserved_key_and_dtype() -> None:
    with pytest.raises(ValueError, match="reserved"):
        stfile.encode({stfile.CHECKSUM_KEY: "x"}, [])
    with pytest.raises(ValueError, match="not supported"):
        stfile.encode({}, [("u", np.zeros(2, dtype=np.uint16))])


def test_save_load_round_trip(tmp_path: Path) -> None:
    """save then load: same metadata and arrays; no temporary left."""
    ts = [("b", np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)), ("a", np.array([2**40, -3], dtype=np.int64)),
          ("s", np.array(1.5))]
    p = tmp_path / "r.safetensors"
    stfile.save(str(p), {"k": "v≤"}, ts)
    meta, arrays = stfile.load(str(p))
    assert meta == {"k": "v≤"}
    for n, a in ts:
        assert arrays[n].shape == a.shape, n  # a 0-d tensor stays 0-d
        np.testing.assert_array_equal(arrays[n], a)
    assert [q.name for q in tmp_path.iterdir()] == ["r.safetensors"]
    assert _header_len(p.read_bytes()) % 8 == 0
