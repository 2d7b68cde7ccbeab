"""/model for the owner, shared by Telegram and the terminal: the current model with what the
Models API says about it, and switching to another available model. The choice is one for the
whole data directory (DATA_DIR/models.json): every chat, the Telegram bot and the terminal chat,
kept across restarts; ``python -m bot doctor`` reports it. The reply says all that, in the user's
language; bad input gets a clear text.
"""

from __future__ import annotations

from typing import Any

from bot.claude.model import ModelError
from bot.texts import t


def _lines(info: Any) -> str:
    return "\n".join(f"  {line}" for line in info.describe())


async def model_text(model: Any, argument: str, lang: str) -> str:
    """``/model``: the current model and the others available; ``/model <id>``: switch to it;
    ``/model refresh``: read the Models API again."""
    if not hasattr(model, "fetch_info"):
        return t("model.unsupported", lang, name=getattr(model, "name", "?"))
    wanted = argument.strip().split()[0] if argument.strip() else ""
    if wanted.lower() == "refresh":
        info = await _fetch(model, model.name)
        if info is None:
            return t("model.unknown", lang, name=model.name)
        return t("model.current", lang, name=model.name, info=_lines(info))
    if not wanted:
        info = await model.info()
        others = [m.id for m in await model.available() if m.id != model.name]
        text = t("model.current", lang, name=model.name, info=_lines(info))
        if others:
            text += "\n" + t("model.others", lang, names=", ".join(others[:15]))
        return text + "\n" + t("model.usage", lang)
    if wanted == model.name:
        return t("model.same", lang, name=wanted)
    listed = [m.id for m in await model.available()]
    if listed and wanted not in listed:
        return t("model.unknown", lang, name=wanted)
    info = await _fetch(model, wanted)
    if info is None:
        return t("model.unknown", lang, name=wanted)
    model.name = wanted
    configured = getattr(model, "configured", model.name)
    model.catalog.select(None if wanted == configured else wanted, over=configured)
    # one choice for every chat and both front ends (DATA_DIR/models.json): the reply says so
    key = "model.switched_back" if wanted == configured else "model.switched"
    return t(key, lang, name=wanted, configured=configured, info=_lines(info))


async def _fetch(model: Any, name: str) -> Any:
    try:
        return await model.fetch_info(name)
    except ModelError:
        return None
