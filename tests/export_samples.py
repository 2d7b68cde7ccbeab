"""Export files as ChatGPT, Claude and Telegram Desktop ship them, following their public descriptions
(docs/memory.md, "Importing history", names the sources): the shapes the importer must read.

- ChatGPT conversations.json: a list of conversations with ``mapping`` (node -> message, parent,
  children) and ``current_node``; edits and regenerations are sibling branches.
- Claude conversations.json: a list of conversations with ``uuid``, ``name``, ``created_at`` and
  ``chat_messages`` (``uuid``, ``sender`` human/assistant, ``text``, ``content`` blocks, ``created_at``).
- Telegram result.json: one chat (``name``, ``type``, ``id``, ``messages``) or the account
  (``personal_information``, ``chats: {"about", "list"}``); messages with ``type``, ``date``,
  ``date_unixtime`` (a string), ``from``, ``from_id``, ``text`` (string or entity list), ``text_entities``.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path
from typing import Any

T0 = 1_700_000_000  # 2023-11-14T22:13:20Z


def gpt_message(mid: str, role: str, parts: list[Any], t: float | None, **extra: Any) -> dict[str, Any]:
    kind = extra.pop("content_type", "text")
    return {
        "id": mid,
        "author": {"role": role, "name": extra.pop("name", None), "metadata": {}},
        "create_time": t,
        "update_time": None,
        "content": {"content_type": kind, "parts": parts},
        "status": "finished_successfully",
        "end_turn": True if role == "assistant" else None,
        "weight": 1.0,
        "metadata": extra.pop("metadata", {}),
        "recipient": extra.pop("recipient", "all"),
        **extra,
    }


def gpt_conversation(cid: str, title: str, nodes: list[tuple[str, str | None, dict[str, Any] | None]], current: str,
                     t: float = T0) -> dict[str, Any]:  # fmt: skip
    """``nodes``: (id, parent id, message); children are derived from the parents."""
    mapping: dict[str, Any] = {nid: {"id": nid, "message": msg, "parent": parent, "children": []}
                               for nid, parent, msg in nodes}  # fmt: skip
    for nid, parent, _ in nodes:
        if parent is not None:
            mapping[parent]["children"].append(nid)
    return {
        "title": title, "create_time": t, "update_time": t + 600, "mapping": mapping, "moderation_results": [],
        "current_node": current, "plugin_ids": None, "conversation_id": cid, "conversation_template_id": None,
        "gizmo_id": None, "is_archived": False, "safe_urls": [], "id": cid,
    }  # fmt: skip


def gpt_edited(cid: str = "c-jeju", t: float = T0) -> dict[str, Any]:
    """A conversation where the user edited the first question and regenerated an answer: the branch
    shown ends at ``a2b``; ``u1``/``a1`` (before the edit) and ``a2`` (regenerated away) are abandoned."""
    hidden = {"is_visually_hidden_from_conversation": True}
    return gpt_conversation(cid, "Jeju trip", [
        ("root", None, None),
        ("sys", "root", gpt_message("sys", "system", [""], None, metadata=hidden)),
        ("u1", "sys", gpt_message("u1", "user", ["Plan a trip to Busan"], t + 10)),
        ("a1", "u1", gpt_message("a1", "assistant", ["Busan: Haeundae beach"], t + 20)),
        ("u2", "sys", gpt_message("u2", "user", [
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-x", "size_bytes": 1},
            "Plan a trip to Jeju for my parents",
        ], t + 30, content_type="multimodal_text")),
        ("a2", "u2", gpt_message("a2", "assistant", ["Jeju (first try): rent a car"], t + 40)),
        ("a2b", "u2", gpt_message("a2b", "assistant", ["Jeju: visit Seongsan Ilchulbong at sunrise"], t + 50)),
    ], current="a2b", t=t)  # fmt: skip


def gpt_with_tools(cid: str = "c-tools", t: float = T0 + 86400) -> dict[str, Any]:
    """A conversation with a hidden context message, a browsing call (the assistant's code to the tool and the
    tool's output) and a text addressed to the image tool: only the question and the answer are kept."""
    hidden = {"is_visually_hidden_from_conversation": True}
    return gpt_conversation(cid, "Weather", [
        ("root", None, None),
        ("ctx", "root", gpt_message("ctxt", "user", ["(hidden context the app added)"], t, metadata=hidden)),
        ("u1", "ctx", gpt_message("u1t", "user", ["What is the weather in Seoul?"], t + 1)),
        ("c1", "u1", gpt_message("c1t", "assistant", ["search('weather Seoul')"], t + 2, content_type="code",
                                 recipient="browser")),
        ("r1", "c1", gpt_message("r1t", "tool", ["Sunny, 21C"], t + 3, content_type="tether_browsing_display",
                                 name="browser")),
        ("d1", "r1", gpt_message("d1t", "assistant", ['{"prompt": "sunny Seoul"}'], t + 4, recipient="dalle.text2im")),
        ("a1", "d1", gpt_message("a1t", "assistant", ["It is sunny in Seoul, 21°C."], t + 5)),
    ], current="a1", t=t)  # fmt: skip


def claude_conversation(uuid: str = "cl-1", when: str = "2024-03-05T09:00:00.000000Z") -> dict[str, Any]:
    day = when[:10]
    return {
        "uuid": uuid, "name": "Sourdough", "created_at": when, "updated_at": when,
        "account": {"uuid": "acc-1"},
        "chat_messages": [
            {"uuid": f"{uuid}-m1", "text": "How long should sourdough proof?", "sender": "human",
             "created_at": f"{day}T09:00:01.000000Z", "updated_at": f"{day}T09:00:01.000000Z",
             "content": [{"type": "text", "text": "How long should sourdough proof?"}],
             "attachments": [], "files": [{"file_name": "starter.jpg"}]},
            {"uuid": f"{uuid}-m2", "text": "", "sender": "assistant",
             "created_at": f"{day}T09:00:09.000000Z", "updated_at": f"{day}T09:00:09.000000Z",
             "content": [
                 {"type": "text", "text": "Let me check."},
                 {"type": "tool_use", "name": "web_search", "input": {"query": "sourdough proof"}},
                 {"type": "tool_result", "name": "web_search", "content": [{"type": "text", "text": "4-6 h"}]},
                 {"type": "text", "text": "Proof it 4 to 6 hours at room temperature."},
             ], "attachments": [], "files": []},
            {"uuid": f"{uuid}-m3", "text": "Thanks! (older export: text only)", "sender": "human",
             "created_at": f"{day}T09:01:00.000000Z", "updated_at": f"{day}T09:01:00.000000Z",
             "attachments": [], "files": []},
        ],
    }  # fmt: skip


def tg_message(mid: int, unix: int, sender: str | None, text: Any, **extra: Any) -> dict[str, Any]:
    from datetime import datetime

    entities = [{"type": "plain", "text": text}] if isinstance(text, str) else [
        p if isinstance(p, dict) else {"type": "plain", "text": p} for p in text]  # fmt: skip
    msg: dict[str, Any] = {"id": mid, "type": extra.pop("type", "message"),
                           "date": datetime.fromtimestamp(unix).strftime("%Y-%m-%dT%H:%M:%S"),
                           "date_unixtime": str(unix)}  # fmt: skip
    if sender is not None:
        msg["from"] = sender
        msg["from_id"] = f"user{zlib.crc32(sender.encode())}"
    msg.update(extra)
    msg["text"] = text
    msg["text_entities"] = entities
    return msg


def tg_chat(chat_id: int = 4242, name: str = "Family", t: int = T0) -> dict[str, Any]:
    return {
        "name": name, "type": "private_group", "id": chat_id,
        "messages": [
            tg_message(1, t, None, "", type="service", actor="Mom", actor_id="user1", action="create_group",
                       title=name, members=["Mom", "Minsu"]),
            tg_message(2, t + 60, "Mom", ["Dinner on ", {"type": "bold", "text": "Saturday"},
                                          " at the ", {"type": "link", "text": "https://example.com/place"}]),
            tg_message(3, t + 120, "Minsu", "I'll bring the kimchi"),
            tg_message(4, t + 180, "Minsu", "Grandma's recipe", forwarded_from="Grandma"),
            tg_message(5, t + 240, "Mom", "", media_type="sticker", sticker_emoji="👍", file="(File not included.)"),
            tg_message(6, t + 300, None, "", type="service", actor="Mom", action="pin_message", message_id=2),
            tg_message(7, t + 310, None, "", type="service", actor="Mom", actor_id="user1", action="edit_group_photo",
                       photo="photos/photo_1@14-11-2023_22-18-30.jpg", width=640, height=640),
        ],
    }  # fmt: skip


def tg_account(chats: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "about": "Here is the data you requested.",
        "personal_information": {"user_id": 1, "first_name": "Minsu", "last_name": "", "phone_number": "+82 10"},
        "contacts": {"about": "…", "list": []},
        "chats": {"about": "This page lists all chats from this export.", "list": chats},
        "left_chats": {"about": "…", "list": []},
    }


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def write_zip(path: Path, member: str, value: Any, **others: str) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(member, json.dumps(value, ensure_ascii=False))
        for name, text in others.items():
            z.writestr(name, text)
    return path


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
