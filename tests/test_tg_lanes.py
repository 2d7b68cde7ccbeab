"""ChatLanes (bot/tg/lanes.py): each chat's updates in a lane of their own, a bounded backlog per chat."""

import asyncio

from telegram import Chat, Message, Update

from bot.tg.lanes import ChatLanes


def update(chat_id: int, n: int) -> Update:
    chat = Chat(chat_id, Chat.PRIVATE)
    return Update(n, message=Message(n, None, chat, text=f"m{n}"))  # type: ignore[arg-type]


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_a_chat_waiting_for_itself_holds_no_shared_slot_and_its_backlog_is_bounded():
    lanes = ChatLanes(per_chat=2, backlog=3, shared=4)
    gate = asyncio.Event()
    started: list[int] = []
    overflows: list[int] = []
    lanes.on_overflow = lambda u: overflows.append(u.update_id)

    async def handle(n: int, wait: bool) -> None:
        started.append(n)
        if wait:
            await gate.wait()

    # one chat floods: far more updates than the shared slots, each waiting for its chat
    for n in range(20):
        await lanes.process_update(update(1, n), handle(n, True))
    await settle()
    assert started == [0, 1]  # two at a time in the chat's lane
    assert lanes.dropped == 20 - 2 - 3 and overflows == [5]  # three wait; the rest dropped, told once
    # another chat is not held up at all
    await lanes.process_update(update(2, 100), handle(100, False))
    await settle()
    assert started == [0, 1, 100]
    gate.set()
    await settle()
    assert started == [0, 1, 100, 2, 3, 4]  # the waiting ones, in order
    assert lanes.lanes() == 0  # empty lanes are forgotten
    # the lane emptied: a new flood is announced again
    gate.clear()
    for n in range(30, 40):
        await lanes.process_update(update(1, n), handle(n, True))
    await settle()
    assert overflows == [5, 35]
    gate.set()
    await settle()
