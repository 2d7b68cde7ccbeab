"""Documents, unit level: which files are read, PDF checks (pages, encryption), text decoding and fences."""

import base64
import io
import random

import pypdf
import pytest

from bot.tg import documents
from bot.tg.documents import DocInfo, kind_of
from tests.fakes.anthropic_server import check_documents
from tests.fakes.messages_rules import InvalidRequest, validate
from tests.helpers import make_pdf


def test_kinds_by_type_and_name():
    assert kind_of("report.pdf", "application/pdf") == "pdf"
    assert kind_of("report.PDF", "application/octet-stream") == "pdf"
    assert kind_of("a.png", "image/png") == "image"
    for name, mime in (
        ("notes.md", None),
        ("data.csv", "text/csv"),
        ("x.json", "application/json"),
        ("main.py", "text/x-python"),
        ("lib.rs", "application/octet-stream"),
        ("Dockerfile", None),
        ("a.txt", "text/plain; charset=utf-8"),
    ):
        assert kind_of(name, mime) == "text", name
    for name, mime in (("a.zip", "application/zip"), ("a.docx", None), ("song.mp3", "audio/mpeg"), (None, None)):
        assert kind_of(name, mime) is None, name


def test_pdf_pages_encryption_and_damage():
    assert documents.pdf_pages(make_pdf(3)) == 3
    block = documents.check_pdf(make_pdf(100))  # exactly the limit is fine
    assert block["type"] == "document" and block["source"]["media_type"] == "application/pdf"
    with pytest.raises(documents.TooManyPages) as e:
        documents.check_pdf(make_pdf(101))
    assert e.value.fields == {"pages": 101, "limit": 100}
    with pytest.raises(documents.Encrypted):
        documents.check_pdf(make_pdf(1, password="secret"))
    with pytest.raises(documents.Encrypted):
        documents.check_pdf(make_pdf(1, password=""))  # an empty user password is still encrypted
    for broken in (b"%PDF-1.7\n garbage", make_pdf(3)[:300], b"not a pdf at all", b""):
        with pytest.raises(documents.Unreadable):
            documents.check_pdf(broken)


def test_text_decoding():
    assert documents.decode_text("한글 UTF-8\r\n둘째 줄".encode()) == "한글 UTF-8\n둘째 줄"
    assert documents.decode_text("\ufeffBOM 있는 파일".encode()) == "BOM 있는 파일"
    assert documents.decode_text("유니코드 16".encode("utf-16")) == "유니코드 16"
    assert documents.decode_text("이름,나이\n민지,30\n".encode("cp949")) == "이름,나이\n민지,30\n"
    assert documents.decode_text("café crème à la carte".encode("cp1252")) == "café crème à la carte"
    for binary in (b"\x00\x01\x02\x03 binary", bytes(range(256)) * 4, b"\x89PNG\r\n\x1a\n\x00\x00"):
        with pytest.raises(documents.NotText):
            documents.decode_text(binary)


def test_text_block_names_the_file_and_fences_it_safely():
    block = documents.check_text("main.py", b"print('hi')\n")
    assert block == {"type": "text", "text": "main.py:\n```python\nprint('hi')\n```"}
    tricky = "a\n````\nnot the end\n````\n"
    text = documents.text_block("notes.md", tricky)["text"]
    assert text.startswith("notes.md:\n`````markdown\n") and text.endswith("\n`````")
    with pytest.raises(documents.TextTooBig):
        documents.check_text("big.txt", b"x" * (documents.MAX_TEXT_BYTES + 1))
    with pytest.raises(documents.NotText):
        documents.check_text("empty.txt", b"  \n ")


def test_stored_marker_and_meta_round_trip():
    assert documents.stored_text("report.pdf", "요약해 줘") == "[문서] report.pdf — 요약해 줘"
    assert documents.stored_text("my  report.pdf", "") == "[문서] my report.pdf"
    info = DocInfo("f1", "report.pdf", "application/pdf", 1234, "pdf")
    assert info.meta() == {"file_id": "f1", "name": "report.pdf", "type": "application/pdf", "size": 1234}
    assert DocInfo.from_meta(info.meta()) == info
    assert DocInfo.from_meta({"file_id": "f", "name": "x.zip", "type": "application/zip"}) is None
    assert DocInfo.from_meta("f1") is None


def test_the_fake_api_refuses_pdfs_like_the_real_one():
    def body(data: bytes, media: str = "application/pdf") -> dict:
        source = {"type": "base64", "media_type": media, "data": base64.b64encode(data).decode()}
        content = [{"type": "document", "source": source}, {"type": "text", "text": "요약"}]
        return {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": content}]}

    ok = body(make_pdf(2))
    validate(ok)
    check_documents(ok)
    with pytest.raises(InvalidRequest, match=r"document.source.base64.media_type: Input should be 'application/pdf'"):
        validate(body(make_pdf(1), "text/plain"))
    cases = (
        (make_pdf(101), "messages.0.content.0.pdf.source.base64.data: A maximum of 100 PDF pages may be provided."),
        (make_pdf(1, password="pw"), "The PDF specified is password protected."),
        (b"hello", "messages.0.content.0.pdf.source.base64.data: The PDF specified was not valid."),
    )
    for data, message in cases:
        with pytest.raises(InvalidRequest) as e:
            check_documents(body(data))
        assert message in str(e.value)


def test_the_fake_api_answers_413_over_32_mb_and_accepts_a_20_mb_pdf_request(fake_anthropic):
    import httpx

    def post(data: str) -> httpx.Response:
        source = {"type": "base64", "media_type": "application/pdf", "data": data}
        content = [{"type": "document", "source": source}, {"type": "text", "text": "요약"}]
        body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": content}]}
        headers = {"x-api-key": "sk-ant-test"}
        return httpx.post(f"{fake_anthropic.url}/v1/messages", json=body, headers=headers, timeout=60)

    too_big = post("A" * (33 * 1024 * 1024))
    assert too_big.status_code == 413
    assert too_big.json()["error"] == {"type": "request_too_large", "message": "Request exceeds the maximum size"}
    # the largest PDF the bot can download (20 MB) fits in a request (a one-page PDF with a big attachment)
    writer = pypdf.PdfWriter()
    writer.add_blank_page(200, 200)
    writer.add_attachment("pad.bin", random.Random(1).randbytes(documents.MAX_DOWNLOAD - 4096))
    out = io.BytesIO()
    writer.write(out)
    padded = out.getvalue()
    assert documents.MAX_DOWNLOAD - 8192 < len(padded) <= documents.MAX_DOWNLOAD
    assert documents.check_pdf(padded)["type"] == "document"
    response = post(base64.b64encode(padded).decode())
    assert response.status_code == 200, response.text


def deep_page_tree_pdf(depth: int) -> bytes:
    """A one-page PDF whose page tree is ``depth`` /Pages nodes deep (a stranger's file could be)."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for i in range(depth):
        parent = f"/Parent {i + 1} 0 R " if i else ""
        objs.append(f"<< /Type /Pages {parent}/Kids [{i + 3} 0 R] /Count 1 >>".encode())
    objs.append(f"<< /Type /Page /Parent {depth + 1} 0 R /MediaBox [0 0 10 10] >>".encode())
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, start=1):
        offsets.append(out.tell())
        out.write(f"{n} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode())
    out.write(b"".join(f"{off:010d} 00000 n \n".encode() for off in offsets))
    out.write(f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def test_a_page_tree_past_pypdfs_limits_is_refused_as_unreadable():
    assert documents.pdf_pages(deep_page_tree_pdf(3)) == 1
    for depth in (150, 20_000):  # deeper than pypdf's page_tree_maximum_depth, and than Python's recursion
        with pytest.raises(documents.Unreadable, match="LimitReachedError"):
            documents.pdf_pages(deep_page_tree_pdf(depth))
