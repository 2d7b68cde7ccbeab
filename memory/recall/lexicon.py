"""A small English lexicon for recall: irregular word forms, and related words for query expansion.

People ask about their past in other words than they used: "What pets does she have?" for
"we adopted a puppy", "When did he run the race?" for "I ran a 10K", "her kids" for "my son".
No model is needed for the commonest of these:

- ``base(word)``: irregular forms to the form the stemmer understands (``ran`` -> ``run``,
  ``bought`` -> ``buy``, ``children`` -> ``child``, ``injury`` -> ``injure``), applied to stored
  text and queries alike (memory.recall.text), so both sides meet in one index term;
- ``related(term)``: for a query term, other terms that mean it or a kind of it, each with a
  weight below 1 (memory.recall.query adds them to the query at that share of their own weight):
  a general word brings its kinds (``pet`` -> dog, cat, puppy, hamster ...; ``hobby`` ->
  painting, hiking, pottery ...), a word its near-synonyms (``job`` <-> work, career; ``kid``
  <-> child, son, daughter); with ``twice``, the terms related to those too, at the product of the
  two weights (``fit`` -> exercise -> yoga, running, swimming).

Written by hand from general English (not from any test set); terms are compared after
memory.recall.text's normalisation (lower case, Porter stem).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

_IRREGULAR_TEXT = """
ran:run ate:eat began:begin begun:begin bought:buy brought:bring built:build caught:catch chose:choose
chosen:choose drew:draw drawn:draw drove:drive driven:drive fell:fall fallen:fall felt:feel fought:fight
flew:fly flown:fly forgot:forget forgotten:forget froze:freeze frozen:freeze gave:give given:give grew:grow
grown:grow heard:hear held:hold hid:hide hidden:hide hurt:hurt kept:keep knew:know known:know led:lead
lent:lend lost:lose meant:mean met:meet paid:pay rode:ride ridden:ride rang:ring rung:ring
sang:sing sung:sing sank:sink sat:sit slept:sleep sold:sell sent:send shook:shake shot:shoot shown:show
spoke:speak spoken:speak spent:spend stood:stand stole:steal stolen:steal swam:swim swum:swim taught:teach
thought:think threw:throw thrown:throw told:tell took:take taken:take tore:tear torn:tear understood:understand
woke:wake woken:wake won:win wore:wear worn:wear wrote:write written:write broke:break broken:break
 bitten:bite blew:blow blown:blow dug:dig dealt:deal fed:feed fled:flee forgave:forgive
hung:hang laid:lay lit:light slid:slide spun:spin stuck:stick struck:strike swept:sweep
found:find sought:seek wept:weep  saw:see seen:see
children:child kids:kid people:person men:man women:woman feet:foot teeth:tooth mice:mouse geese:goose
wives:wife knives:knife   wolves:wolf halves:half shelves:shelf
injury:injure injuries:injure
"""

# "head words: member words" (a general word and kinds of it, found when the head is asked for) and
# "= words" (near-synonyms, each finding the others)
_GROUPS_TEXT = """
pet pets animal animals: dog dogs puppy puppies pup cat cats kitten kittens kitty hamster rabbit bunny
  parrot bird fish goldfish turtle tortoise lizard snake guinea horse pony ferret gecko
= dog puppy pup doggy pooch
= cat kitten kitty
instrument instruments: guitar violin piano keyboard drums drum cello bass ukulele flute clarinet saxophone
  trumpet harp banjo viola trombone harmonica accordion
music musical: song songs band concert guitar piano violin sing singing album playlist melody choir orchestra
  instrument
hobby hobbies activity activities pastime interest interests fun: painting paint drawing draw sketching pottery
  ceramics hiking hike camping camp swimming swim running run jogging yoga gardening garden baking bake
  cooking cook knitting sewing photography photo dancing dance reading read fishing cycling bike biking
  climbing skiing surfing skating chess gaming writing write journaling volunteering music guitar piano
  singing crafts woodworking pilates meditation running marathon
sport sports exercise workout: soccer football basketball baseball tennis volleyball hockey golf swimming
  running cycling gym yoga climbing skiing surfing boxing marathon race hiking rugby badminton
art arts artwork creative: painting paint drawing sketch pottery ceramics sculpture photography canvas
  watercolor mural craft
= paint painting painter canvas
= draw drawing sketch
= pottery ceramics clay potter
= hike hiking trail trek
= camp camping tent campfire
= run running jog jogging race marathon 5k 10k
= swim swimming pool
= bake baking oven cake cookies bread
= cook cooking recipe meal dinner
= garden gardening plant plants grow
= photo photos photograph photography picture pictures camera
= read reading book books novel author
= write writing writer wrote story poem journal blog
= dance dancing dancer
= sing singing singer song
= teach teacher teaching taught lesson class instructor tutor
= learn learning study studying lesson lessons class course practice practise practising practicing
= study studying student school college university degree major
= school class classes course teacher student
family relatives relative: kid kids child children son daughter sons daughters baby husband wife partner
  mom mum mother dad father parent parents brother sister sibling siblings grandma grandmother grandpa
  grandfather aunt uncle cousin niece nephew grandchild
= kid kids child children son daughter baby toddler
= mom mum mother mama
= dad father papa
= parent parents mom dad mother father
= partner husband wife spouse boyfriend girlfriend fiance
= grandma grandmother granny nana
= grandpa grandfather
= friend friends buddy pal
= job work career position profession occupation employer company office hired promoted promotion
= boss manager supervisor
= coworker colleague
= promotion promoted raise
= quit resign resigned fired laid
profession occupation: teacher nurse doctor engineer lawyer designer developer programmer counselor
  therapist artist writer chef manager accountant scientist researcher student
= trip travel traveled vacation holiday journey visit visited tour abroad
= vacation holiday getaway trip
place places city cities country countries: visit trip travel moved live
= move moved moving relocate relocated relocation
= home house apartment flat place
live lives lived living: home house apartment moved move city town neighborhood neighbourhood
relationship relationships dating: single married dating divorced boyfriend girlfriend partner husband wife
  engaged breakup fiance spouse
identity: transgender trans nonbinary gay lesbian queer bisexual lgbtq heritage culture religion faith
  nationality
event events: party festival concert parade conference workshop meetup fundraiser ceremony wedding
  graduation competition tournament exhibition fair game match
outdoor outdoors nature: hiking hike camping camp beach park garden trail forest mountain lake river
  fishing kayaking
field fields subject subjects: psychology counseling engineering medicine nursing law art design education
  science biology history math business
education: school college university degree study studying major course class graduate graduated
= money cash savings budget expensive cheap price cost afford
artist artists musician musicians: singer band musician rapper painter composer
= buy bought purchase purchased shopping order
= car vehicle truck van suv
= bike bicycle cycling
= sick ill illness flu cold fever
= hurt injure injured injury sprain sprained twisted broke broken pain accident
= doctor hospital clinic nurse surgery
= health healthy fitness exercise workout diet
food foods meal meals: dish dishes pizza pasta sushi ramen tacos burger soup salad curry cake dessert
  bread cookies breakfast lunch dinner snack recipe
= diet vegetarian vegan meat eating food gluten keto
= drink drinks coffee tea wine beer juice
= movie movies film films cinema watch watched show series
= show series tv episode
= game games gaming videogame
= book books novel novels read reading author library
= concert gig show festival band perform performance
= party celebration celebrate birthday anniversary wedding
= wedding married marry marriage engaged engagement
= birthday bday
= volunteer volunteering volunteered charity donate donated donation fundraiser nonprofit shelter
= charity fundraiser donate donation cause
= support supportive help helped helping
= group club community meetup
= friend friendship
= feel feeling felt emotion emotions
= happy glad joy excited thrilled
= sad upset down depressed lonely
= stress stressed anxious anxiety worried overwhelmed
= relax relaxing unwind calm chill destress
= inspire inspired inspiration inspiring motivate motivated
= favorite favourite fave love loves
= color colour
= gift present gifts presents
= house home
= neighborhood neighbourhood area
= weekend saturday sunday
= photo picture image pic
= beach sea ocean shore coast
= mountain mountains hike peak
= lake river
= park playground
= museum gallery exhibit exhibition
= phone call called texted
= meet met meeting
= adopt adopted adoption rescue
= goal goals dream dreams plan plans aspire aspiration
= career job profession
= mentor mentoring mentorship
= identity identify
= event events
"""


def _parse_irregular(text: str) -> dict[str, str]:
    out = {}
    for pair in text.split():
        form, base_ = pair.split(":")
        out[form] = base_
    return out


IRREGULAR = _parse_irregular(_IRREGULAR_TEXT)

HYPONYM_WEIGHT = 0.6  # a kind of what was asked for ("dog" for "pet")
SYNONYM_WEIGHT = 0.8  # a near-synonym ("job" for "career")


def base(word: str) -> str:
    """The base form of an irregular English word (lower case), else the word itself."""
    return IRREGULAR.get(word, word)


def _groups() -> list[tuple[list[str], list[str], bool]]:
    """(heads, members, synonyms) from _GROUPS_TEXT; continuation lines start with spaces."""
    lines: list[str] = []
    for raw in _GROUPS_TEXT.splitlines():
        if not raw.strip():
            continue
        if raw.startswith("  ") and lines:
            lines[-1] += " " + raw.strip()
        else:
            lines.append(raw.strip())
    out = []
    for line in lines:
        if line.startswith("="):
            words = line[1:].split()
            out.append((words, words, True))
        else:
            heads, _, members = line.partition(":")
            out.append((heads.split(), members.split(), False))
    return out


@cache
def _table(normalise: Callable[[str], str | None]) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    for heads, members, synonyms in _groups():
        weight = SYNONYM_WEIGHT if synonyms else HYPONYM_WEIGHT
        head_terms = dict.fromkeys(t for t in map(normalise, heads) if t)
        member_terms = dict.fromkeys(t for t in map(normalise, members) if t)  # in the order written (not a set:
        for h in head_terms:  # who is cut off by a limit on related terms must not depend on hashing)
            found = table.setdefault(h, {})
            for m in member_terms:
                if m != h:
                    found[m] = max(found.get(m, 0.0), weight)
    return table


@cache
def _twice(normalise: Callable[[str], str | None]) -> dict[str, dict[str, float]]:
    """Each term's related terms, then theirs at the product of the two weights ("fit" -> exercise -> yoga, running:
    0.8 x 0.6), in a fixed order (the first step's first)."""
    table = _table(normalise)
    out: dict[str, dict[str, float]] = {}
    for term, near in table.items():
        found = dict(near)
        for r, w in near.items():
            for r2, w2 in table.get(r, {}).items():
                if r2 != term and r2 not in near:
                    found[r2] = max(found.get(r2, 0.0), w * w2)
        out[term] = found
    return out


def related(term: str, normalise: Callable[[str], str | None], *, twice: bool = False) -> dict[str, float]:
    """Index terms related to the index term ``term``, with their weights (0..1); ``normalise``
    turns a lexicon word into an index term (memory.recall.text.word_term). ``twice``: the terms related
    to those too, at the product of the two weights (a general word's kinds: "fit" -> exercise -> yoga)."""
    return (_twice if twice else _table)(normalise).get(term, {})
