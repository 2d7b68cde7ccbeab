# ruff: noqa: E501  (tables of sentences)
"""A generator of long multi-session conversations with questions whose evidence is known turns.

Two people talk over months (a session every few days to weeks, 14-30 turns each). Facts about
either of them are planted in some sessions, some change later (a new job, a move, a new gate
code), and the rest is small talk, much of it on the same topics (the other one's own pet, books
in general), so that words alone do not single out the evidence.

Questions, each with the 1-based transcript lines of its evidence turns:

- ``single``: a paraphrase of one statement ("What instrument is Maria learning?" for
  "I've been practising the cello every night");
- ``reply``: the fact is the answer to the other person's question, and the question asked later
  uses the other person's words ("What book is Maria reading?" for "What are you reading?" -
  "'Dune', can't put it down");
- ``temporal``: "When did ...?" about a dated event;
- ``date``: names the month ("What did Maria buy in March 2023?");
- ``changed``: the current value of a fact that changed (evidence: the newest statement), or
  the earlier value (evidence: the older one);
- ``multi``: evidence in two sessions ("What pets does Maria have?").

Transcripts are written in the bot's format (one JSON message per line, ``at`` per turn). In
``named`` style a turn is ``"Name: text"`` with a ``name`` field (as a group chat stores it); in
``plain`` style it is only the text. The first speaker is ``user``, the second ``assistant``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

NAMES = [
    ("Maria", "Jonas"), ("Caleb", "Priya"), ("Hannah", "Tom"), ("Omar", "Lucy"), ("Sofia", "Daniel"),
    ("Aiden", "Mei"), ("Grace", "Victor"), ("Nadia", "Ben"), ("Elena", "Sam"), ("Kofi", "Ines"),
]  # fmt: skip

SMALL_TALK = [
    "Hey! How have you been?", "Good to hear from you!", "It's been a crazy week honestly.",
    "Haha, that's so true.", "I know what you mean.", "Same here, work has been busy.",
    "That sounds lovely.", "Anyway, what's new with you?", "I'm doing well, thanks for asking!",
    "Let's catch up again soon.", "Talk soon, take care!", "Oh wow, really?", "That's amazing!",
    "I was thinking about you the other day.", "The weather has been so nice lately.",
    "I slept in all weekend, it was great.", "Coffee is the only thing keeping me going.",
    "We should get together sometime.", "I can't believe how fast this year is going.",
    "Honestly I needed that break.", "Sounds like a plan!", "Ha, you always say that.",
    "I'm so proud of you!", "Tell me everything.", "Wish I could have been there.",
    "That reminds me of when we were in college.", "You always know how to cheer me up.",
    "I've been trying to get more sleep.", "Work keeps piling up but I'm managing.",
    "Thanks for listening, it means a lot.", "Life has been pretty quiet lately.",
    "I tried a new recipe yesterday and it was a disaster, haha.", "My neighbours are so loud.",
    "I've been watching a lot of documentaries.", "Family is everything, right?",
    "Let me know how it goes!", "Fingers crossed for you.", "That must have been hard.",
]  # fmt: skip

# topic-word distractors: said by either person, about nothing in particular
DISTRACT = {
    "pet": ["I love dogs but my landlord doesn't allow pets.", "My cousin's cat keeps knocking things over.",
            "Animals just make everything better, don't they?"],
    "book": ["I keep buying books and never reading them.", "Do you still go to the library?",
             "Reading before bed helps me relax."],
    "job": ["Work has been stressful, my manager changed again.", "Job hunting is exhausting.",
            "Some days I want to quit and open a bakery."],
    "home": ["Rent keeps going up everywhere.", "Moving is the worst, all those boxes.",
             "I'd love to live near the sea someday."],
    "music": ["I've had the same song stuck in my head all day.", "Live music is the best thing ever.",
              "I used to play piano as a kid, I forgot everything."],
    "sport": ["I should really exercise more.", "Did you watch the game last night?",
              "Running in this heat is impossible."],
    "food": ["I could eat pasta every single day.", "We ordered takeout three times this week, oops.",
             "Cooking for one is so hard."],
    "travel": ["I need a vacation so badly.", "Airports stress me out.", "Where would you go if you could go anywhere?"],
    "family": ["My family group chat is chaos.", "Holidays with the whole family are a lot.",
               "I call my parents every Sunday."],
    "movie": ["I fell asleep during the movie again.", "The cinema near me closed down.",
              "We never agree on what to watch."],
    "health": ["My back hurts from sitting all day.", "I finally went to the dentist.",
               "Everyone at the office has a cold."],
    "purchase": ["I really need to stop buying stuff online.", "Our living room still looks empty.",
                 "Everything is so expensive these days."],
    "code": ["I always forget my passwords.", "The building manager never answers emails.",
             "Someone left the front door open again."],
    "volunteer": ["I'd like to give back more somehow.", "The local shelter is looking for help.",
                  "Weekends go by way too fast."],
    "class": ["I keep signing up for things and not going.", "Learning something new as an adult is hard.",
              "Online courses never work for me."],
}  # fmt: skip


@dataclass
class Fact:
    """A fact template: what is said (with the other person's lines around it) and what is asked.

    ``say``: lines in order, each (who, text) with who 'S' (the subject, evidence) or 'O' (the other,
    context). Texts use {S}/{O} for the names and slot values. ``ask``: (kind, question) pairs; a
    question ending in ``@n`` has its evidence in the subject's n-th line (from 0), else the first.
    """

    topic: str
    say: list[tuple[str, str]]
    ask: list[tuple[str, str]]
    slots: dict[str, list[str]] = field(default_factory=dict)
    change: list[tuple[str, str]] | None = None  # said in a later session; evidence of "now"
    ask_changed: list[tuple[str, str]] = field(default_factory=list)  # (now|before, question)


FACTS = [
    Fact("pet", [("S", "We just adopted a {young}! We named her {pet}."), ("O", "Aww, a {animal}! What breed is she?"),
                 ("S", "A {breed}, she's super playful. Best pet ever.")],
         [("single", "What is the name of {S}'s {animal}?"), ("temporal", "When did {S} adopt a {animal}?")],
         {"young": ["puppy", "kitten"], "pet": ["Luna", "Biscuit", "Pepper", "Mochi"],
          "animal": ["dog", "cat"], "breed": ["golden retriever", "beagle", "tabby", "Maine Coon"]}),
    Fact("book", [("O", "What have you been reading lately?"), ("S", "'{title}' by {author}, I can't put it down.")],
         [("reply", "What book is {S} reading?"), ("reply", "Which author has {S} been reading?")],
         {"title": ["The Overstory", "Pachinko", "Circe", "Project Hail Mary", "Educated"],
          "author": ["Richard Powers", "Min Jin Lee", "Madeline Miller", "Andy Weir", "Tara Westover"]}),
    Fact("job", [("S", "Big news: I started my new job as a {job} at {company} on Monday!"),
                 ("O", "Congrats on the new position!")],
         [("single", "Where did {S} start working?")],
         {"job": ["nurse", "data analyst", "graphic designer", "teacher"], "company": ["Brightwell", "Nordlys", "Kestrel Labs"],
          "job2": ["project manager", "consultant", "product owner"], "company2": ["Halcyon", "Ridgeway", "Orbit Health"]},
         change=[("S", "I left {company}. My new job is {job2} at {company2}, way better hours."),
                 ("O", "Wow, another change! Happy for you.")],
         ask_changed=[("now", "What is {S}'s current job?"), ("before", "Where did {S} work before {company2}?")]),
    Fact("home", [("S", "We finally moved into our new apartment in {city}!"), ("O", "How do you like the neighbourhood?"),
                  ("S", "It's quiet and there's a park right next to us.")],
         [("single", "Which city did {S} move to?")],
         {"city": ["Lisbon", "Denver", "Toronto", "Melbourne"], "city2": ["Portland", "Edinburgh", "Austin", "Utrecht"]},
         change=[("S", "Guess what, we're relocating again: from next month we live in {city2}, for my partner's work.")],
         ask_changed=[("now", "Where does {S} live now?"), ("before", "Where did {S} live before {city2}?")]),
    Fact("music", [("S", "I've been practising the {instrument} every night, my fingers hurt."),
                   ("O", "That's dedication! Are you taking lessons?"), ("S", "Yes, with a teacher called {teacher}.")],
         [("single", "What instrument is {S} learning?"), ("single", "Who teaches {S} music?@1")],
         {"instrument": ["cello", "violin", "ukulele", "saxophone"], "teacher": ["Mrs Alvarez", "Mr Okafor", "Ilse"]}),
    Fact("sport", [("S", "I ran a charity {race} for {cause} last Sunday."), ("O", "That's so inspiring! How did it go?"),
                   ("S", "I finished in {time}, slower than I hoped but it was for a good cause.")],
         [("temporal", "When did {S} run the charity race?"), ("single", "What cause did {S} raise money for?")],
         {"race": ["5K", "half marathon", "10K"], "cause": ["mental health awareness", "the children's hospital", "clean oceans"],
          "time": ["32 minutes", "two hours", "58 minutes"]}),
    Fact("food", [("O", "Are you still eating meat?"), ("S", "Nope, I've been fully vegetarian since {month}.")],
         [("reply", "What diet does {S} follow?")], {"month": ["January", "the spring", "my birthday"]}),
    Fact("travel", [("S", "We're back from our trip to {place}! The {sight} was breathtaking."), ("O", "I'm so jealous, did you take photos?"),
                    ("S", "Hundreds, I'll show you the one from the {sight}.")],
         [("date", "Where did {S} go on a trip in {month_year}?"), ("single", "What did {S} see in {place}?")],
         {"place": ["Kyoto", "Iceland", "Peru", "Morocco"], "sight": ["bamboo forest", "waterfall", "old temple", "desert"]}),
    Fact("family", [("S", "My {relative} {rname} is flying in from {home} next week."), ("O", "How long is {rname} staying?"),
                    ("S", "Two weeks, I've planned a trip to the lake with {rname}.")],
         [("single", "Who is visiting {S} from {home}?"), ("single", "What did {S} plan with the visitor?@1")],
         {"relative": ["sister", "brother", "aunt", "grandmother"], "rname": ["Clara", "Felix", "Rosa", "Ada"],
          "home": ["Chicago", "Manila", "Lagos", "Warsaw"]}),
    Fact("class", [("S", "I signed up for a {course} class at the community centre."), ("O", "Fun! Which day is it on?"),
                   ("S", "Thursdays after work.")],
         [("single", "What class did {S} sign up for?"), ("temporal", "When did {S} sign up for the {course} class?")],
         {"course": ["pottery", "salsa", "watercolour", "Spanish"]}),
    Fact("health", [("S", "I twisted my ankle playing {sport2}, so I'm on crutches."), ("O", "Oh no, how bad is the injury?"),
                    ("S", "Just a sprain, the doctor said six weeks.")],
         [("single", "How did {S} get injured?"), ("temporal", "When did {S} hurt the ankle?")],
         {"sport2": ["basketball", "volleyball", "tennis"]}),
    Fact("purchase", [("S", "I bought a {item} for the {room}, it changed everything."), ("O", "Ooh, send me a picture!")],
         [("date", "What did {S} buy in {month_year}?"), ("single", "What did {S} get for the {room}?")],
         {"item": ["reading lamp", "standing desk", "velvet sofa", "record player"], "room": ["living room", "study", "bedroom"]}),
    Fact("code", [("S", "Heads up, the new gate code for the building is {code}."), ("O", "Got it, thanks!")],
         [("single", "What is the gate code at {S}'s building?")],
         {"code": ["4719", "8302", "1596"], "code2": ["2648", "7731", "5094"]},
         change=[("S", "They changed the gate code again, it's {code2} from now on.")],
         ask_changed=[("now", "What is the current gate code at {S}'s building?"),
                      ("before", "What was the gate code before it changed to {code2}?")]),
    Fact("movie", [("O", "Seen anything good lately?"), ("S", "'{movie}', I watched it twice in one weekend!")],
         [("reply", "Which movie did {S} watch twice?")],
         {"movie": ["Past Lives", "Arrival", "Paddington 2", "The Grand Budapest Hotel"]}),
    Fact("volunteer", [("S", "I started volunteering at the {shelter} on Saturdays."), ("O", "That's really kind of you."),
                       ("S", "Mostly I help with {task}.")],
         [("single", "Where does {S} volunteer?"), ("single", "What does {S} help with when volunteering?@1")],
         {"shelter": ["animal shelter", "food bank", "homeless shelter"], "task": ["sorting donations", "walking the dogs",
                                                                                    "serving meals"]}),
]  # fmt: skip

MULTI = [
    # (topic pair, question): evidence = the first evidence line of each fact of the pair, same subject
    (("pet", "pet"), "What pets does {S} have?"),
    (("class", "music"), "What has {S} been learning?"),
    (("travel", "family"), "Where has {S} travelled or planned trips?"),
]


@dataclass
class Question:
    text: str
    kind: str
    evidence: list[int]


@dataclass
class Conversation:
    chat: str
    lines: list[dict[str, object]]
    questions: list[Question]


_GENERIC = [
    "I {did} the {thing} {when}, {feel}.",
    "Did you ever {do} the {thing}? I {did} it {when}.",
    "The {thing} at {place} was {adj} {when}.",
    "{when_cap} I {did} the {thing} with my {person}.",
    "My {person} {did} the {thing} {when}, {feel}.",
    "I keep thinking about the {adj} {thing} from {place}.",
    "We {did} the {thing} {when} and it was {adj}.",
]
_WORDS = {
    "did": ["cleaned", "fixed", "found", "lost", "organised", "returned", "borrowed", "repainted", "moved", "sold"],
    "do": ["clean", "fix", "find", "organise", "return", "borrow", "repaint", "sell"],
    "thing": ["garage", "bike", "laptop", "kitchen", "balcony", "umbrella", "printer", "backpack", "fridge",
              "car seat", "bookshelf", "closet", "jacket", "blender", "curtains", "mailbox", "lawn"],
    "when": ["this morning", "yesterday", "last night", "over the weekend", "after lunch", "on my day off"],
    "feel": ["what a relief", "so annoying", "kind of fun actually", "finally", "took forever", "no regrets"],
    "place": ["the mall", "the office", "my parents' place", "the market", "the station", "downtown"],
    "adj": ["weird", "huge", "tiny", "noisy", "fancy", "old", "brand new", "broken"],
    "person": ["roommate", "coworker", "neighbour", "cousin", "best friend", "dad", "mom"],
}  # fmt: skip


def small_talk(rnd: random.Random) -> str:
    """A line of small talk: a stock phrase, or a sentence about everyday things."""
    if rnd.random() < 0.5:
        return rnd.choice(SMALL_TALK)
    values = {k: rnd.choice(v) for k, v in _WORDS.items()}
    values["when_cap"] = values["when"][0].upper() + values["when"][1:]
    return rnd.choice(_GENERIC).format(**values)


def _fill(text: str, values: dict[str, str]) -> str:
    return text.format(**values)


def generate(seed: int, *, style: str = "named", sessions: int = 24) -> Conversation:
    """One conversation of ``sessions`` sessions and its questions (deterministic for a seed)."""
    rnd = random.Random(seed)
    a, b = NAMES[seed % len(NAMES)]
    speakers = {"user": a, "assistant": b}
    start = datetime(2023, 1, 5, 10, 0) + timedelta(days=rnd.randrange(300))
    # plan: which facts go in which session, for which subject
    plan: list[list[tuple[Fact, str, dict[str, str], bool]]] = [[] for _ in range(sessions)]
    instances: list[tuple[Fact, str, dict[str, str], int]] = []
    for subject in (a, b):
        for fact in rnd.sample(FACTS, k=min(len(FACTS), 11)):
            values = {k: rnd.choice(v) for k, v in fact.slots.items()}
            s = rnd.randrange(0, sessions - 4)
            plan[s].append((fact, subject, values, False))
            instances.append((fact, subject, values, s))
            if fact.change is not None:
                plan[rnd.randrange(s + 2, sessions)].append((fact, subject, values, True))
        second = [f for f in FACTS if f.topic == "pet"][0]
        values = {k: rnd.choice(v) for k, v in second.slots.items()}
        s = rnd.randrange(0, sessions)
        plan[s].append((second, subject, values, False))  # a second pet for the 'multi' questions
        instances.append((second, subject, values, s))
    lines: list[dict[str, object]] = []
    evidence: dict[tuple[int, bool], list[int]] = {}  # (id of instance values, changed) -> lines of S
    session_month: dict[int, str] = {}
    when = start
    for si in range(sessions):
        when += timedelta(days=rnd.randint(3, 21), hours=rnd.randint(-3, 3))
        session_month[si] = when.strftime("%B %Y")
        turns: list[tuple[str, str, tuple[int, bool] | None]] = []
        blocks: list[list[tuple[str, str, tuple[int, bool] | None]]] = []
        for fact, subject, values, changed in plan[si]:
            other = b if subject == a else a
            full = {"S": subject, "O": other, "month_year": session_month[si], **values}
            says = fact.change if changed and fact.change else fact.say
            key = (id(values), changed)
            blocks.append(
                [(subject if w == "S" else other, _fill(t, full), key if w == "S" else None) for w, t in says]
            )
            if rnd.random() < 0.6:
                who = rnd.choice((a, b))
                blocks.append([(who, rnd.choice(DISTRACT[fact.topic]), None)])
        for topic in rnd.sample(sorted(DISTRACT), k=2):
            blocks.append([(rnd.choice((a, b)), rnd.choice(DISTRACT[topic]), None)])
        rnd.shuffle(blocks)
        n_small = rnd.randint(8, 16)

        def chat_line(turns: list[tuple[str, str, tuple[int, bool] | None]]) -> tuple[str, str, None]:
            last = turns[-1][0] if turns else a
            who = (b if last == a else a) if rnd.random() < 0.85 else last  # people mostly take turns
            return who, small_talk(rnd), None

        turns.append((a if rnd.random() < 0.5 else b, rnd.choice(SMALL_TALK[:3]), None))
        for block in blocks:
            for _ in range(rnd.randint(0, 2)):
                turns.append(chat_line(turns))
            turns.extend(block)
        while len(turns) < n_small + sum(len(x) for x in blocks):
            turns.append(chat_line(turns))
        t = when
        for who, text, key in turns:
            role = "user" if who == a else "assistant"
            msg: dict[str, object] = {"role": role, "content": f"{who}: {text}" if style == "named" else text,
                                      "at": t.isoformat(timespec="seconds")}  # fmt: skip
            if style == "named":
                msg["name"] = who
            lines.append(msg)
            if key is not None:
                evidence.setdefault(key, []).append(len(lines))
            t += timedelta(seconds=rnd.randint(20, 240))
    del speakers
    questions: list[Question] = []
    for fact, subject, values, s in instances:
        other = b if subject == a else a
        full = {"S": subject, "O": other, "month_year": session_month[s], **values}
        said = evidence.get((id(values), False), [])
        if not said:
            continue
        for kind, q in fact.ask:
            q, _, at = q.partition("@")  # "...?@1": the evidence is the subject's second line
            ev = said[int(at or 0) : int(at or 0) + 1]
            if (
                kind == "date"
                and sum(
                    1
                    for f2, s2, _, x in instances
                    if f2 is fact and s2 == subject and session_month[x] == session_month[s]
                )
                > 1
            ):
                continue  # the month does not single out one fact
            questions.append(Question(_fill(q, full), kind, ev))
        changed = evidence.get((id(values), True))
        if fact.change is not None and changed:
            for which, q in fact.ask_changed:
                questions.append(Question(_fill(q, full), "changed", changed[:1] if which == "now" else said[:1]))
    for (t1, t2), q in MULTI:
        for subject in (a, b):
            other = b if subject == a else a
            mine = [(f, v) for f, s, v, _ in instances if s == subject and f.topic in (t1, t2)]
            ev = sorted({evidence[(id(v), False)][0] for f, v in mine if (id(v), False) in evidence})
            if len(ev) >= 2:
                questions.append(Question(_fill(q, {"S": subject, "O": other}), "multi", ev))
    return Conversation(f"conv{seed}", lines, questions)


def write(conv: Conversation, data_dir: Path) -> Path:
    """Write the conversation as ``data_dir/chats/<chat>.jsonl``; return the path."""
    chats = data_dir / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    path = chats / f"{conv.chat}.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for m in conv.lines:
            f.write(json.dumps(m, ensure_ascii=False) + "\n")
    return path
