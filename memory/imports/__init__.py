"""Importing conversations kept elsewhere (ChatGPT's, Claude's and Telegram Desktop's exports) into a chat's
history, as archived transcripts with their own dates; and reading a chat's whole history out again.

    import_file(path, data_dir, chat, progress=None) -> ImportReport   # never raises for a bad file
    history(data_dir, chat) -> Iterator[(file name or None, message)]  # archives by date, then the live one

Modules: ``jsonstream`` (an incremental JSON reader: bounded memory for any file size), ``formats`` (what
is kept of each format), ``store`` (conversations into archived transcripts, each message recognized
again at the next import), ``run`` (a file: zip or JSON, the format told from the content, the report),
``history`` (every transcript of a chat, in order, as JSON lines or Markdown).
"""

from memory.imports.history import history, history_jsonl, history_markdown
from memory.imports.run import ImportReport, import_file

__all__ = ["ImportReport", "history", "history_jsonl", "history_markdown", "import_file"]
