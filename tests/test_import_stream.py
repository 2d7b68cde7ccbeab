"""The incremental JSON reader (memory.imports.jsonstream): the same values as json.loads whatever the chunk
boundaries, bounded memory, and a broken file told at once."""

from __future__ import annotations

import io
import json

import pytest

from memory.imports.jsonstream import JsonError, JsonStream, Truncated

DOC = [
    {"title": 'ünïcødé ☃ "quoted" \\ back', "n": 12345.678e-3, "ok": True, "none": None, "neg": -7},
    {"nested": {"a": [1, [2, [3, {"b": "c"}]]], "empty": {}, "list": []}, "big": 10**30},
    "a string with \\u escapes \u00e9 and emoji 😀",
    1.5,
    [],
]


class Reads(io.BytesIO):
    """A stream that counts what was read from it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.taken += len(data)
        return data


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64, 1 << 20])
def test_items_decode_as_json_loads_whatever_the_chunks(chunk):
    raw = json.dumps(DOC, ensure_ascii=False, indent=1).encode()
    stream = JsonStream(io.BytesIO(raw), chunk=chunk)
    got = []
    for _ in stream.items():
        got.append(stream.value())
    assert got == DOC and stream.at_end()


@pytest.mark.parametrize("chunk", [1, 4, 1 << 20])
def test_keys_and_skip_walk_an_object(chunk):
    doc = {"skip_me": {"deep": [{"x": "}]"}] * 3}, "name": "Family", "messages": [{"id": 1}, {"id": 2}], "z": 0}
    stream = JsonStream(io.BytesIO(b"\xef\xbb\xbf" + json.dumps(doc).encode()), chunk=chunk)  # with a BOM
    seen = {}
    for key in stream.keys():
        if key == "messages":
            seen[key] = [stream.value() for _ in stream.items()]
        elif key == "name":
            seen[key] = stream.value()
        else:
            stream.skip()
    assert seen == {"name": "Family", "messages": [{"id": 1}, {"id": 2}]}


def test_a_broken_value_is_told_without_reading_the_rest_of_the_file():
    raw = b'[{"a": 1 "b": 2}, ' + b'{"pad": "' + b"x" * 5_000_000 + b'"}]'
    data = Reads(raw)
    stream = JsonStream(data, chunk=4096)
    with pytest.raises(JsonError, match="malformed JSON at 9: Expecting ',' delimiter"):
        for _ in stream.items():
            stream.value()
    assert data.taken <= 2 * 4096


def test_a_cut_file_is_truncated_and_memory_is_bounded_by_one_value():
    one = {"text": "y" * 10_000}
    raw = json.dumps([one] * 200).encode()
    stream = JsonStream(io.BytesIO(raw[:-50]), chunk=1024)
    n = 0
    with pytest.raises(Truncated):
        for _ in stream.items():
            assert stream.value() == one
            n += 1
            assert len(stream._buf) < 4 * len(json.dumps(one))  # never the whole file
    assert n == 199


def test_a_value_over_the_limit_is_refused():
    stream = JsonStream(io.BytesIO(json.dumps([{"t": "z" * 100_000}]).encode()), chunk=1024, max_value=10_000)
    with pytest.raises(JsonError, match="over 10,000 characters"):
        for _ in stream.items():
            stream.value()
