# ruff: noqa: E501  (tables of sentences)
"""A second generator: long chats between two named friends, in the manner of public long-term
conversational memory benchmarks (two people, 18-30 dated sessions over months, chatty turns of one
to four sentences that address the other by name, photos shared with a caption).

Each person has a life: hobbies, pets, family, work, causes, trips; episodes of it are told in
sessions ("I finally signed up for a pottery class last Friday!"), the friend reacts and asks, the
person answers with details, some episodes happen again later or change. The friend has a life of
their own on overlapping topics, and most turns are warm small talk with the same everyday words.

Questions (kinds as in such benchmarks), each with the transcript lines of its evidence turns:

- ``single``: one turn, asked with other words ("What did Mel make in her pottery class?" for the
  answer turn "A little bowl with a blue glaze...");
- ``temporal``: "When did X ...?" (evidence: the turn telling the event; the date is the session's);
- ``multi``: evidence in several sessions ("What hobbies does X have?", "What has X made in
  pottery class?", "How many times did X go camping?");
- ``open``: needs a guess from the evidence ("Would X enjoy a ceramics exhibition?");
- ``adversarial``: a ``single`` question about the wrong person (the evidence is the turn of the one it is true of);
- and, unless ``hard=False``, harder ``multi`` and ``open`` questions in words the lexicon does not relate to their
  evidence (bench.recall_persona_hard), episodes mentioned again in passing in later sessions, questions about both
  people and inferences from several episodes (bench.recall_persona_spread), ``temporal`` ones in other words, by month
  or in other forms (recall_persona_when), ``single`` ones in other words (recall_persona_single), some of the wrong one,
  and ``multi`` ones in other forms (recall_persona_lists).

A question names a person by the full name or, half of the time, by the short one the friend uses
("Mel" for Melanie), as people do: the turns carry the full name (``name``, ``"Name: "``).

``layout`` says how the chat is written as transcripts (how an evaluator might convert such data):
``named`` (``"Name: text"`` with a ``name`` field, the first speaker ``user``), ``plain`` (text
only, roles tell who), ``oneside`` (both speakers ``user``, names in the text and ``name``),
``sessions`` (``named``, one archived transcript file per session, no live one), ``rawdate``
(``named`` with ``at`` written as "1:56 pm on 8 May, 2023"), ``nodate`` (``named`` without ``at``).
All turns of a session carry the session's date-time.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import bench.recall_persona_lists as lists
from bench import recall_persona_hard, recall_persona_single, recall_persona_spread, recall_persona_when
from bench.recall_tables import Tables, Topic

LAYOUTS = ("named", "plain", "oneside", "sessions", "rawdate", "nodate")

PEOPLE = [
    ("Caroline", "Caro", "her"), ("Melanie", "Mel", "her"), ("Jonathan", "Jon", "his"), ("Gina", "Gi", "her"),
    ("Nathaniel", "Nate", "his"), ("Joanna", "Jo", "her"), ("Deborah", "Deb", "her"), ("Calvin", "Cal", "his"),
    ("Andrew", "Andy", "his"), ("Audrey", "Aud", "her"), ("Timothy", "Tim", "his"), ("Evangeline", "Evie", "her"),
    ("Maximilian", "Max", "his"), ("Samantha", "Sam", "her"), ("Roberto", "Rob", "his"), ("Priyanka", "Priya", "her"),
]  # fmt: skip


TOPICS = [
    Topic("pottery", "hobby",
          [("S", "Guess what, I finally signed up for a pottery class last {weekday}! Getting my hands all muddy was so therapeutic."),
           ("O", "A pottery class? That's awesome, {s}! What did you make?"),
           ("S", "A little {thing} with a {color} glaze. It's wonky but I love it. [shared an image: a photo of a {color} ceramic {thing} on a table]")],
          [("temporal", "When did {S} sign up for a pottery class?", 0), ("single", "What did {S} make in {p} pottery class?", 2),
           ("open", "Would {S} enjoy a ceramics exhibition?", 0), ("single", "What does {S} find therapeutic?", 0)],
          {"thing": ["bowl", "mug", "vase", "plate"], "color": ["blue", "green", "speckled white", "rust orange"]},
          again=[("S", "Back at the studio this week! I threw a {thing2} on the wheel and it actually came out even."),
                 ("O", "Look at you, a real potter now!")],
          again_asks=[("multi", "What items has {S} made with clay?", ["2", "a0"])]),
    Topic("painting", "hobby",
          [("S", "I've been painting again, {o}. Here's one I finished yesterday, it's {scene}. [shared an image: a painting of {scene}]"),
           ("O", "Wow, the colours are so vivid! What inspired it?"),
           ("S", "I saw it on my morning walk and couldn't stop thinking about it. Painting helps me unwind after a long day.")],
          [("single", "What did {S} paint recently?", 0), ("single", "How does {S} unwind after a long day?", 2),
           ("open", "Would {S} like a gift card for an art supply store?", 0)],
          {"scene": ["a sunrise over a lake", "a field of sunflowers", "a lighthouse in a storm", "an old oak tree"]},
          again=[("S", "Finished another canvas, {scene2} this time. [shared an image: a painting of {scene2}]")],
          again_asks=[("multi", "What has {S} painted?", ["0", "a0"])]),
    Topic("camping", "hobby",
          [("S", "We just got back from camping at {park} with the kids! We roasted marshmallows and told stories by the fire."),
           ("O", "That sounds like so much fun! How was the weather?"),
           ("S", "Cold at night but the stars were unreal. The kids want to go again already.")],
          [("temporal", "When did {S} go camping?", 0), ("single", "Where did {S} go camping with the kids?", 0)],
          {"park": ["the lake", "Pine Ridge", "the national park", "the mountains"]},
          again=[("S", "We went camping again, this time at {park2}, and saw a meteor shower!")],
          again_asks=[("multi", "How many times has {S} gone camping?", ["0", "a0"])]),
    Topic("hiking", "hobby",
          [("S", "I did the {trail} trail on {weekday}, eight miles up and back. My legs are still sore!"),
           ("O", "Eight miles! What was the view like at the top?"),
           ("S", "You could see the whole valley and a waterfall. Totally worth the climb.")],
          [("temporal", "When did {S} hike the {trail} trail?", 0), ("single", "Which trail did {S} hike?", 0), ("single", "What could {S} see from the top of the trail?", 2)],
          {"trail": ["Eagle Peak", "Red Rock", "Bear Creek", "Cedar Ridge"]}),
    Topic("swimming", "hobby",
          [("S", "I joined the pool near my place and I swim laps every morning before work now."),
           ("O", "Every morning? I'm impressed, {s}!")],
          [("single", "What does {S} do every morning before work?", 0), ("open", "Is {S} likely a morning person?", 0)]),
    Topic("running", "hobby",
          [("S", "I ran a charity {race} last {weekday} to raise money for {cause}. It was exhausting but so rewarding!"),
           ("O", "That's amazing! How long did it take you?"),
           ("S", "About {time}. Not my best, but the crowd cheering at the finish line was incredible.")],
          [("temporal", "When did {S} run a charity race?", 0), ("single", "What cause did {S} raise money for by running?", 0),
           ("single", "How long did it take {S} to finish the race?", 2)],
          {"race": ["5K", "10K", "half marathon"], "cause": ["mental health awareness", "the children's hospital", "cancer research"],
           "time": ["forty minutes", "two hours", "an hour and ten minutes"]}),
    Topic("yoga", "hobby",
          [("S", "I've started doing yoga three times a week, it really calms my mind."),
           ("O", "I always wanted to try it! Which kind?"),
           ("S", "Mostly {yoga} at a little studio downtown. The instructor is so patient.")],
          [("temporal", "When did {S} start doing yoga?", 0), ("single", "What kind of yoga does {S} practise?", 2), ("single", "What helps {S} calm {p} mind?", 0)],
          {"yoga": ["vinyasa", "hatha", "yin"]}),
    Topic("gardening", "hobby",
          [("S", "My tomatoes are finally ripe! I've been spending every evening in the garden."),
           ("O", "Homegrown tomatoes are the best. What else are you growing?"),
           ("S", "{veg} and some herbs, basil mostly. [shared an image: a photo of a small vegetable garden]")],
          [("single", "What is {S} growing in the garden?", 2), ("open", "Would {S} enjoy a farmers market?", 0)],
          {"veg": ["Zucchini", "Peppers", "Strawberries", "Lettuce"]}),
    Topic("guitar", "instrument",
          [("S", "I bought a {guitar} guitar and I'm learning chords from online videos."),
           ("O", "Can you play a whole song yet?"),
           ("S", "Just '{song}', badly, haha. My fingertips hurt so much.")],
          [("temporal", "When did {S} buy a guitar?", 0), ("single", "What instrument did {S} start learning?", 0), ("single", "What song can {S} play?", 2)],
          {"guitar": ["acoustic", "electric", "secondhand"], "song": ["Wonderwall", "Riptide", "Stand By Me"]}),
    Topic("violin", "instrument",
          [("S", "I picked up my old violin again after ten years. I practise scales every night."),
           ("O", "That's so cool, {s}! Do you play in a group?"),
           ("S", "I just joined a community orchestra, our first concert is in {month}.")],
          [("single", "What instrument has {S} played since childhood?", 0), ("single", "What group did {S} join to play music?", 2)],
          {"month": ["December", "the spring", "two months"]}),
    Topic("dog", "pet",
          [("S", "We adopted a {breed} puppy! {Pet} is chewing everything in the house. [shared an image: a photo of a {breed} puppy on a rug]"),
           ("O", "Oh my gosh, {Pet} is adorable! How are the kids with her?"),
           ("S", "They are obsessed, they fight over who gets to walk her.")],
          [("single", "What is the name of {S}'s dog?", 0), ("temporal", "When did {S} adopt a puppy?", 0),
           ("single", "What breed is {S}'s puppy?", 0)],
          {"breed": ["beagle", "golden retriever", "corgi", "border collie"], "Pet": ["Luna", "Biscuit", "Pepper", "Oliver"]}),
    Topic("cat", "pet",
          [("S", "Meet {Cat}, our new kitten! She sleeps on my laptop while I work. [shared an image: a photo of a grey kitten sleeping on a keyboard]"),
           ("O", "Stop, that is too cute! Where did you get her?"),
           ("S", "From the rescue center on {street}, she was the smallest of the litter.")],
          [("temporal", "When did {S} get a kitten?", 0), ("single", "What is the name of {S}'s kitten?", 0), ("single", "Where did {S} get {p} cat?", 2)],
          {"Cat": ["Mochi", "Bailey", "Nala", "Ziggy"], "street": ["Main Street", "Elm Road", "the harbour"]}),
    Topic("kids_museum", "family",
          [("S", "I took the kids to the {museum} museum yesterday. They loved the {exhibit}!"),
           ("O", "That sounds like a perfect day out, {s}. Did they learn a lot?"),
           ("S", "My youngest wouldn't stop talking about it at dinner.")],
          [("temporal", "When did {S} take the kids to the museum?", 0), ("single", "What did {S}'s kids love at the museum?", 0)],
          {"museum": ["science", "natural history", "children's"], "exhibit": ["dinosaur skeletons", "planetarium show", "butterfly room"]}),
    Topic("sibling", "family",
          [("S", "My {relative} {rname} is visiting from {home} next week, I haven't seen {rname} in two years!"),
           ("O", "You must be so excited! What are you planning?"),
           ("S", "A picnic by the river and a day at the beach, just like when we were little.")],
          [("single", "Who is visiting {S} from {home}?", 0), ("single", "What did {S} plan for the family visit?", 2)],
          {"relative": ["sister", "brother", "cousin"], "rname": ["Clara", "Felix", "Rosa", "Marcus"],
           "home": ["Chicago", "Sweden", "Dublin", "Manila"]}),
    Topic("job", "career",
          [("S", "Big news, {o}: I got the job as a {job} at {company}! I start on Monday."),
           ("O", "Congratulations!! You totally deserve it.")],
          [("temporal", "When did {S} get the job at {company}?", 0), ("single", "What job did {S} get?", 0), ("single", "Where does {S} work?", 0)],
          {"job": ["nurse", "graphic designer", "software engineer", "school counselor"], "company": ["Brightwell", "Kestrel Labs", "the city hospital"],
           "job2": ["team lead", "consultant", "project manager"]},
          again=[("S", "I got promoted to {job2}! More meetings, but I love leading the team."),
                 ("O", "Wow, a promotion already! So proud of you.")],
          again_asks=[("multi", "How has {S}'s career changed over time?", ["0", "a0"])]),
    Topic("study", "career",
          [("S", "I've decided to go back to school to study {field}. I want to help people going through what I went through."),
           ("O", "That's such a meaningful path, {s}. What made you decide?"),
           ("S", "My own counselor changed my life, honestly. I want to pay that forward.")],
          [("single", "What does {S} want to study?", 0), ("open", "What career path is {S} likely to pursue?", 0),
           ("single", "Who inspired {S} to go back to school?", 2)],
          {"field": ["psychology", "social work", "counseling"]}),
    Topic("support_group", "cause",
          [("S", "I went to a {group} support group yesterday and it was so powerful. Everyone was so open."),
           ("O", "That's wonderful, {s}. What was it like?"),
           ("S", "Hearing their stories made me feel less alone, I'm going every week now.")],
          [("temporal", "When did {S} go to the support group?", 0), ("single", "What kind of support group does {S} attend?", 0),
           ("single", "How did the stories at the group make {S} feel?", 2)],
          {"group": ["grief", "LGBTQ", "new parents", "cancer survivors"]}),
    Topic("shelter", "cause",
          [("S", "I've started volunteering at the {shelter} on Saturdays, mostly {task}."),
           ("O", "That's really generous of you, {s}.")],
          [("temporal", "When did {S} start volunteering?", 0), ("single", "Where does {S} volunteer?", 0), ("single", "What does {S} do when volunteering?", 0)],
          {"shelter": ["animal shelter", "food bank", "homeless shelter"], "task": ["sorting donations", "walking the dogs", "serving meals"]}),
    Topic("trip", "travel",
          [("S", "We're back from {place}! The {sight} was breathtaking, I took so many photos. [shared an image: a photo of the {sight}]"),
           ("O", "I'm so jealous! What was the best part?"),
           ("S", "Honestly the food. I'm still dreaming about the {food}.")],
          [("single", "Where did {S} travel recently?", 0), ("single", "What food did {S} love on the trip?", 2),
           ("temporal", "When did {S} get back from {place}?", 0)],
          {"place": ["Kyoto", "Iceland", "Peru", "Lisbon"], "sight": ["old temple", "waterfall", "mountain pass", "castle"],
           "food": ["ramen", "street tacos", "custard tarts", "grilled fish"]},
          again=[("S", "Just booked another trip, {place2} in the fall! I can't wait.")],
          again_asks=[("multi", "Which places has {S} travelled to or planned to visit?", ["0", "a0"])]),
    Topic("book", "reading",
          [("O", "Read anything good lately, {s}?"),
           ("S", "I'm halfway through '{title}' and I can't put it down. It's about {about}.")],
          [("single", "What book is {S} reading?", 1), ("single", "What is the book {S} is reading about?", 1)],
          {"title": ["The Overstory", "Circe", "Educated", "Project Hail Mary"],
           "about": ["trees and the people who protect them", "a witch on an island", "growing up without school", "an astronaut saving the world"]}),
    Topic("injury", "health",
          [("S", "Ugh, I twisted my ankle playing {sport} and now I'm on crutches for a few weeks."),
           ("O", "Oh no, {s}! Does it hurt a lot?"),
           ("S", "Only when I try to walk on it, haha. The doctor said rest and ice.")],
          [("single", "How did {S} get hurt?", 0), ("temporal", "When did {S} sprain {p} ankle?", 0)],
          {"sport": ["basketball", "volleyball", "soccer"]}),
    Topic("move", "home",
          [("S", "We finally moved into our new place in {city}! Boxes everywhere but it feels like home already."),
           ("O", "Congrats on the move! How's the neighbourhood?"),
           ("S", "Quiet, with a park right across the street. The kids love it.")],
          [("temporal", "When did {S} move to {city}?", 0), ("single", "Which city did {S} move to?", 0), ("single", "What is near {S}'s new home?", 2)],
          {"city": ["Denver", "Portland", "Toronto", "Austin"]}),
    Topic("concert", "event",
          [("S", "Last night I saw {band} live, {o}! I screamed so much I lost my voice."),
           ("O", "No way! Was it as good as you hoped?"),
           ("S", "Better. They played my favourite song as the encore and I cried, haha.")],
          [("temporal", "When did {S} see {band} in concert?", 0), ("single", "Which band did {S} see live?", 0)],
          {"band": ["Coldplay", "the Lumineers", "Florence and the Machine", "Arctic Monkeys"]}),
    Topic("car", "purchase",
          [("S", "I finally bought a car, a used {car}! No more waiting for the bus in the rain."),
           ("O", "Freedom! What colour is it?"),
           ("S", "{carcolor}, the kids call it the bumblebee, haha.")],
          [("single", "What car did {S} buy?", 0), ("single", "What colour is {S}'s car?", 2)],
          {"car": ["Honda Civic", "Toyota Prius", "Subaru Outback"], "carcolor": ["Yellow", "Bright yellow"]}),
]  # fmt: skip

MULTI_CATS = {
    "hobby": ["What hobbies does {S} have?", "What activities does {S} enjoy in {p} free time?"],
    "pet": ["What pets does {S} have?"],
    "instrument": ["Which musical instruments does {S} play?"],
    "cause": ["How does {S} help others in {p} community?"],
    "family": ["What has {S} done with {p} family?"],
}

SMALL = [
    "Hey {o}! Good to hear from you! How have you been?", "Hi {o}! It's been a while, what's new?",
    "Hey {o}, hope you're doing well! Work has been crazy this week.", "Long time no talk, {o}! So much has happened.",
    "I'm good, thanks for asking! The kids keep me busy as always.", "Same old, same old. Trying to find some balance lately.",
    "That's so great to hear, {o}! I'm really happy for you.", "Aww, that means so much to me. Thanks for always supporting me.",
    "You're so right. Family really is everything.", "I know what you mean, life can be a roller coaster sometimes.",
    "Haha, that's so you! I love it.", "That sounds amazing, I'm so proud of you!",
    "It's important to take care of yourself too, you know?", "I totally get that. Self-care is so important.",
    "Thanks, {o}! Talking to you always makes my day better.", "Anyway, enough about me! How are things with you?",
    "I'll keep you posted! Take care of yourself.", "Bye {o}! Talk soon, and say hi to everyone for me.",
    "Definitely! Let's catch up again soon.", "Have a great week, {o}! Can't wait to hear more.",
    "It's been a really busy few weeks but in a good way.", "I had a pretty quiet weekend, just relaxing at home.",
    "The weather has been so nice lately, we spent a lot of time outside.", "I feel like this year is flying by!",
    "Wow, that's a lot to take in. How are you feeling about it?", "That must have been really tough for you.",
    "I'm always here if you need to talk, you know that.", "It really helps to have people who support you.",
    "Sounds like you had a blast!", "That's such a sweet memory, thanks for sharing it with me.",
    "Yeah, we've been trying to spend more quality time together.", "Honestly, I needed that break so much.",
    "I'm learning to be more patient with myself.", "It's all about the little things, right?",
    "You always know how to cheer me up, {o}.", "That's a great idea, I might try that too!",
]  # fmt: skip

# the friend's own chatter on the same topics (no facts asked about)
ECHO = {
    "hobby": ["I wish I had time for a hobby like that, work eats all my evenings.", "I tried painting once, it was a disaster, haha.",
              "We went on a little walk in the park last weekend, nothing fancy.", "I keep saying I'll start exercising more."],
    "pet": ["My neighbour's dog barks all night, it drives me nuts.", "I'd love a pet someday but our landlord says no."],
    "instrument": ["I played piano as a kid but I forgot everything.", "Music always makes me feel better."],
    "family": ["My kids have been fighting all week, I need a vacation!", "We had a big family dinner on Sunday, so loud but fun."],
    "career": ["Work has been stressful, my manager keeps changing the deadlines.", "Sometimes I think about changing careers."],
    "cause": ["I donated some old clothes last week, felt good to declutter.", "Our community is so supportive, I'm grateful."],
    "travel": ["I need a vacation so badly.", "Airports stress me out, but I love being somewhere new."],
    "reading": ["I keep buying books and never reading them.", "I listen to audiobooks on my commute now."],
    "health": ["I finally went to the dentist, all good!", "My back hurts from sitting all day."],
    "home": ["Rent keeps going up everywhere.", "I'd love to live near the sea someday."],
    "event": ["I haven't been to a concert in years.", "We watched a movie at home, popcorn and all."],
    "purchase": ["Everything is so expensive these days.", "I really need to stop buying stuff online."],
}  # fmt: skip


@dataclass
class Question:
    text: str
    kind: str
    evidence: list[tuple[str | None, int]]  # (archived file name or None for the live one, 1-based line)


# questions about what no conversation here ever touches (the relevance floor: nothing should come back)
OFF_TOPIC = [
    "Where did {S} see a zebra?", "What is {S}'s blood type?", "Which programming language does {S} code in?",
    "How much did {S} pay the plumber?", "What is the wifi password at {S}'s place?",
    "Which football club does {S} support?", "What did {S} order at the sushi bar?",
    "Has {S} fixed the leaking roof yet?", "What is {S}'s favourite cocktail?", "What did {S} think of the election?",
    "What did {S} name the sailboat?", "What tattoo did {S} get?",
]  # fmt: skip


@dataclass
class Conversation:
    chat: str
    files: dict[str | None, list[dict[str, object]]]  # None: the live transcript, else archive file name
    questions: list[Question]
    never: list[tuple[str, str]] = field(default_factory=list)  # (question, kind): never answered in the chat

    @property
    def lines(self) -> list[dict[str, object]]:
        return [m for f in self.files.values() for m in f]


def _fmt(text: str, values: dict[str, str]) -> str:
    return text.format(**values)


def _raw_at(t: datetime) -> str:
    hour = t.strftime("%I").lstrip("0")
    return f"{hour}:{t:%M} {t:%p}".lower() + f" on {t.day} {t:%B}, {t.year}"


def generate(
    seed: int, *, layout: str = "named", sessions: int | None = None, hard: bool = True, tables: Tables | None = None
) -> Conversation:
    """One conversation and its questions (deterministic for a seed and layout); ``hard``: with the
    questions of bench.recall_persona_hard too (the table's own, and the mentions of bench.recall_persona_spread
    where the table has them); ``tables``: the language's (English by default)."""
    tb = tables or ENGLISH
    rnd = random.Random(seed * 7919 + 17)
    (a, a_short, a_p), (b, b_short, b_p) = rnd.sample(tb.people, 2)
    sessions = sessions or rnd.randint(18, 30)
    who = {a: (a_short, a_p), b: (b_short, b_p)}
    # each person lives through ~10 topics; some topics happen to both (with other details)
    plan: list[list[tuple[Topic, str, dict[str, str], bool]]] = [[] for _ in range(sessions)]
    lives: list[tuple[Topic, str, dict[str, str], int, int | None]] = []  # topic, subject, values, session, again
    for subject in (a, b):
        for topic in rnd.sample(tb.topics, k=11):
            values = {k: rnd.choice(v) for k, v in topic.slots.items()}
            for k, v in topic.slots.items():  # the second time: another value
                others = [x for x in v if x != values[k]]
                values.setdefault(k + "2", rnd.choice(others or v))
            s = rnd.randrange(0, sessions - 3)
            plan[s].append((topic, subject, values, False))
            again = None
            if topic.again is not None and rnd.random() < 0.7:
                again = rnd.randrange(s + 2, sessions)
                plan[again].append((topic, subject, values, True))
            lives.append((topic, subject, values, s, again))
    spread = (
        recall_persona_spread.Spread(seed, [(t.key, s, v, si) for t, s, v, si, _ in lives], sessions)
        if hard and tb.mentions
        else None
    )  # mentioned again in passing
    start = datetime(2022, 3, 1, 9, 0) + timedelta(days=rnd.randrange(400))
    files: dict[str | None, list[dict[str, object]]] = {}
    evidence: dict[Hashable, tuple[str | None, int]] = {}  # (id(values), again, say index) or a mention's -> line
    when = start
    days: list[datetime] = []  # each session's
    for si in range(sessions):
        when += timedelta(days=rnd.randint(4, 24), minutes=rnd.randint(-300, 300))
        when = when.replace(hour=rnd.randint(8, 21), minute=rnd.randint(0, 59))
        days.append(when)
        fname = None if layout != "sessions" else f"chat{seed}.{when:%Y%m%dT%H%M%S}Z.jsonl"
        lines = files.setdefault(fname, [])
        turns: list[tuple[str, str, Hashable | None]] = []
        opener = rnd.choice((a, b))
        other_of = {a: b, b: a}

        def small(speaker: str, other_of: dict[str, str] = other_of) -> str:
            return _fmt(rnd.choice(tb.small), {"o": rnd.choice((other_of[speaker], who[other_of[speaker]][0]))})

        hello = _fmt(
            rnd.choice(tb.small[: tb.greetings]), {"o": rnd.choice((other_of[opener], who[other_of[opener]][0]))}
        )
        turns.append((opener, hello, None))
        turns.append((other_of[opener], small(other_of[opener]), None))
        blocks: list[list[tuple[str, str, Hashable | None]]] = []
        for topic, subject, values, again in plan[si]:
            friend = other_of[subject]
            full = {
                "S": subject, "O": friend, "s": rnd.choice((subject, who[subject][0])),
                "o": rnd.choice((friend, who[friend][0])), "p": who[subject][1], "weekday": rnd.choice(tb.weekdays),
                **values,
            }  # fmt: skip
            says = topic.again if again and topic.again else topic.say
            block = [
                (subject if w == "S" else friend, _fmt(text, full), (id(values), again, i) if w == "S" else None)
                for i, (w, text) in enumerate(says)
            ]
            if rnd.random() < 0.5:
                block.append((friend, rnd.choice(tb.echo[topic.cat]), None))
            blocks.append(block)
        for _ in range(rnd.randint(1, 3)):
            blocks.append([(rnd.choice((a, b)), rnd.choice(tb.echo[rnd.choice(sorted(tb.echo))]), None)])
        rnd.shuffle(blocks)
        for block in blocks:
            turns.extend(block)
            for _ in range(rnd.randint(1, 4)):
                last = turns[-1][0]
                turns.append((other_of[last], small(other_of[last]), None))
        while len(turns) < 16:
            last = turns[-1][0]
            turns.append((other_of[last], small(other_of[last]), None))
        last = turns[-1][0]
        turns.append((other_of[last], _fmt(rnd.choice(tb.small[slice(*tb.closings)]), {"o": last}), None))
        if spread is not None:
            spread.at(si, turns)
        for speaker, text, key in turns:
            role = "user" if speaker == a or layout == "oneside" else "assistant"
            msg: dict[str, object] = {"role": role, "content": text if layout == "plain" else f"{speaker}: {text}"}
            if layout != "plain":
                msg["name"] = speaker
            if layout == "rawdate":
                msg["at"] = _raw_at(when)
            elif layout != "nodate":
                msg["at"] = when.isoformat(timespec="seconds")
            lines.append(msg)
            if key is not None:
                evidence[key] = (fname, len(lines))
    questions: list[Question] = []
    names = random.Random(seed * 104729 + 3)  # its own stream: the conversation stays the same

    def called(person: str) -> str:
        """How a question names someone: the full name, or the short one friends use ("Mel")."""
        return person if names.random() < 0.5 else who[person][0]

    for topic, subject, values, _s, again in lives:
        friend = b if subject == a else a
        full = {"S": called(subject), "O": friend, "p": who[subject][1], **values}
        singles = []
        for kind, q, i in topic.asks:
            ev = evidence.get((id(values), False, i))
            if ev is None:
                continue
            questions.append(Question(_fmt(q, full), kind, [ev]))
            if kind == "single":
                singles.append((q, ev))
        if singles and rnd.random() < 0.8:  # the same question about the wrong person
            q, ev = rnd.choice(singles)
            questions.append(Question(_fmt(q, {**full, "S": called(friend)}), "adversarial", [ev]))
        if again is not None:
            for _kind, q, refs in topic.again_asks:
                evs = [evidence.get((id(values), r.startswith("a"), int(r.lstrip("a")))) for r in refs]
                if all(evs):
                    questions.append(Question(_fmt(q, full), "multi", [e for e in evs if e]))
    episodes = {evidence[(id(v), False, 0)]: (t.key, s) for t, s, v, _, _ in lives if (id(v), False, 0) in evidence}
    for cat, qs in tb.multi_cats.items():
        for subject in (a, b):
            evs = [evidence.get((id(v), False, 0)) for t, s, v, _, _ in lives if s == subject and t.cat == cat]
            evs = [e for e in evs if e]
            if len(evs) >= 2:
                q = rnd.choice(qs)
                evs = spread.widen(evs[:4], episodes, evidence) if spread is not None else evs[:4]
                questions.append(Question(_fmt(q, {"S": called(subject), "p": who[subject][1]}), "multi", evs))
    if hard:  # asked in words the lexicon does not relate to their evidence (bench.recall_persona_hard)

        def told(key: str, subject: str, i: int) -> tuple[str | None, int] | None:
            found = [v for t, s, v, _, _ in lives if t.key == key and s == subject]
            return evidence.get((id(found[0]), False, i)) if found else None

        extra = recall_persona_hard.questions(seed, [a, b], told, called, lambda s: who[s][1], tb.threads, tb.guesses)
        questions += [
            Question(t, k, spread.widen(ev, episodes, evidence) if k == "multi" and spread else ev)
            for t, k, ev in extra
        ]
        if spread is not None:
            both = spread.questions((a, b), episodes, evidence, called, lambda s: who[s][1])
            questions += [Question(text, kind, ev) for text, kind, ev in both]
    never = _never(seed, (a, b), {t.key for t, *_ in lives}, called, tb)
    if hard and tb.when_words:  # last: the names drawn for the questions above stay the same
        told_when = [(t.key, s, evidence.get((id(v), False, 0)), days[si], evidence.get((id(v), True, 0)), days[ag or si])
                     for t, s, v, si, ag in lives]  # fmt: skip
        whens = recall_persona_when.questions(seed, told_when, called, lambda s: who[s][1], {a: b, b: a}.__getitem__, tb)  # fmt: skip
        whens += recall_persona_when.forms(seed, [(q.text, q.kind, q.evidence) for q in questions] + whens, tb.when_forms)  # fmt: skip
        questions += [Question(text, kind, ev) for text, kind, ev in whens + recall_persona_single.questions(seed, told_when, called, lambda s: who[s][1], tb.single_words, {a: b, b: a}.__getitem__) + lists.forms(seed, [(q.text, q.kind, q.evidence) for q in questions], tb.list_forms) + recall_persona_when.how_long(seed, told_when, lambda s: who[s][0], lambda s: who[s][1], {a: b, b: a}.__getitem__, tb)]  # fmt: skip
    return Conversation(f"chat{seed}", files, questions, never)


def _never(
    seed: int, people: tuple[str, str], told: set[str], called: Callable[[str], str], tb: Tables
) -> list[tuple[str, str]]:
    """Questions whose answer was never in the chat: the questions of the topics neither person lives through
    (``absent``: their words may still be said in passing, "I tried painting once") and questions on what no
    conversation touches (``off-topic``); an own random stream, so the conversation and its questions stay the same."""
    rnd = random.Random(seed * 15485863 + 11)
    out: list[tuple[str, str]] = []
    for topic in tb.topics:
        if topic.key in told:
            continue
        kind, q, _ = rnd.choice([a for a in topic.asks if a[0] != "temporal"] or topic.asks)
        subject = rnd.choice(people)
        values = {k: rnd.choice(v) for k, v in topic.slots.items()}
        p = {name: pronoun for name, _, pronoun in tb.people}[subject]
        out.append((q.format(S=called(subject), p=p, **values), "absent"))
    for q in rnd.sample(tb.off_topic, 6):
        out.append((q.format(S=called(rnd.choice(people))), "off-topic"))
    return out


ENGLISH = Tables(PEOPLE, TOPICS, SMALL, ECHO, MULTI_CATS, OFF_TOPIC, recall_persona_hard.THREADS, recall_persona_hard.GUESSES, when_words=recall_persona_when.OTHER_WORDS, when_months=recall_persona_when.WHICH_TIME, when_long=recall_persona_when.HOW_LONG, when_forms=recall_persona_when.FORMS, single_words=recall_persona_single.OTHER_WORDS, list_forms=lists.LIST_FORMS)  # fmt: skip


def write(conv: Conversation, data_dir: Path) -> None:
    """Write the conversation's transcripts under ``data_dir/chats`` (archives in ``chats/archive``)."""
    chats = data_dir / "chats"
    for name, lines in conv.files.items():
        path = chats / f"{conv.chat}.jsonl" if name is None else chats / "archive" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            for m in lines:
                f.write(json.dumps(m, ensure_ascii=False) + "\n")
