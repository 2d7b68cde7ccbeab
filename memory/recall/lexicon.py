"""A small English (and Korean) lexicon for recall: irregular word forms, and related words for query expansion.

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
  two weights (``fit`` -> exercise -> yoga, running, swimming);
- ``korean_related(pieces)``: the same groups in Korean, by the two-letter pieces Hangul is indexed as
  ("악기를" -> 기타, 이올 of 바이올린, 피아 ...; "다쳤어" -> 접질, 삐끗, 부러 ...), one step only.

Written by hand from general English (not from any test set), the Korean translated from it; terms are compared
after memory.recall.text's normalisation (lower case, Porter stem).
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


# The groups above in Korean (translated from them, not from any test set): Hangul is indexed as two-letter pieces
# (memory.recall.text), so a word here stands for its pieces, and a question's word matches a head word by the
# pieces it starts with ("악기를" -> 악기). A word of one syllable is left out (개, 새, 책, 집: as a prefix it would
# find every word starting so); a verb is written as the stems it is said with (다치, 다쳤, 다친, 다쳐).
_KO_GROUPS_TEXT = """
반려동물 애완동물 동물: 강아지 고양이 햄스터 토끼 앵무새 물고기 금붕어 거북이 도마뱀 기니피그 조랑말 페럿
= 강아지 멍멍이 댕댕이 반려견
= 고양이 냥이 반려묘
악기: 기타 바이올린 피아노 키보드 드럼 첼로 베이스 우쿨렐레 플루트 클라리넷 색소폰 트럼펫 하프 비올라 트롬본
  하모니카 아코디언
음악: 노래 밴드 콘서트 기타 피아노 바이올린 가수 앨범 플레이리스트 멜로디 합창 오케스트라 악기
취미 여가 관심사: 그림 스케치 도자기 도예 등산 하이킹 캠핑 수영 달리기 러닝 조깅 요가 정원 가드닝 베이킹 요리
  뜨개질 바느질 사진 댄스 독서 낚시 자전거 클라이밍 스키 서핑 스케이트 체스 게임 글쓰기 일기 봉사 음악 기타
  피아노 노래 공예 목공 필라테스 명상 마라톤
운동 스포츠: 축구 농구 야구 테니스 배구 하키 골프 수영 달리기 러닝 자전거 헬스 요가 클라이밍 스키 서핑 복싱
  마라톤 등산 럭비 배드민턴
예술 미술 작품 창작: 그림 도자기 도예 조각 사진 캔버스 수채화 벽화 공예
= 그림 그렸 화가 캔버스
= 도자기 도예 점토 공방
= 등산 하이킹 산행 트레킹 등산로
= 캠핑 텐트 모닥불 캠핑장
= 달리기 러닝 조깅 마라톤
= 수영 수영장
= 베이킹 오븐 케이크 쿠키
= 요리 레시피 식사
= 정원 텃밭 화분 식물 가드닝
= 사진 카메라 촬영
= 독서 소설 작가
= 글쓰기 작가 일기 블로그
= 노래 가수
= 가르치 선생님 강사 수업 레슨 과외
= 배우 배웠 공부 수업 강좌 연습
= 공부 학생 학교 대학 대학교 학위 전공
가족 친척: 아이 애들 자녀 아들 아기 남편 아내 와이프 엄마 어머니 아빠 아버지 부모님 오빠 누나 언니 동생
  할머니 할아버지 이모 고모 삼촌 사촌 조카 손주
= 아이 애들 자녀 아들 아기
= 엄마 어머니
= 아빠 아버지
= 부모님 엄마 아빠 어머니 아버지
= 남편 아내 와이프 배우자 남친 여친 남자친구 여자친구 약혼자
= 친구 친구들
= 직업 커리어 직장 회사 사무실 취직 승진
= 상사 팀장 부장 매니저
= 동료
= 승진 연봉
= 퇴사 그만두 해고
직업: 선생님 간호사 의사 엔지니어 변호사 디자이너 개발자 프로그래머 상담사 치료사 예술가 작가 셰프 요리사
  회계사 과학자 연구원 학생
= 여행 휴가 해외 관광 방문
= 이사 이사했
= 아파트 주택 동네
행사 이벤트: 파티 축제 콘서트 퍼레이드 컨퍼런스 워크숍 모임 바자회 기념식 결혼식 졸업식 대회 전시회 박람회 경기
야외 자연: 등산 캠핑 해변 공원 정원 산책로 호수 낚시 카약
분야 과목 전공: 심리학 상담 공학 의학 간호학 법학 미술 디자인 교육 과학 생물학 역사 수학 경영
= 저축 예산 비싸 가격 비용
= 구매 쇼핑 주문
= 자동차 차량 트럭
= 아프 아파 감기 독감 몸살
= 다치 다쳤 다친 다쳐 부상 삐었 삐끗 접질 부러 골절 통증 사고
= 의사 병원 진료 간호사 수술
= 건강 운동 헬스 다이어트
음식 식사: 요리 피자 파스타 초밥 라멘 타코 버거 수프 샐러드 카레 케이크 디저트 쿠키 아침 점심 저녁 간식 레시피
= 커피 와인 맥주 주스 음료
= 영화 드라마 시리즈
= 소설 도서관 독서 작가
= 콘서트 공연 페스티벌 밴드 라이브
= 파티 축하 생일 기념일 결혼식
= 결혼 결혼식 약혼
= 봉사 자원봉사 기부 자선 모금 바자회 보호소
= 응원 도움 도와
= 모임 동호회 커뮤니티 클럽
= 행복 기쁘 신나 설레
= 슬프 우울 외로 속상
= 스트레스 불안 걱정
= 휴식 힐링 차분 편안 여유
= 영감 동기
= 선물
= 주말 토요일 일요일
= 바다 해변 해안
= 호수 강가
= 공원 놀이터
= 박물관 미술관 전시 전시회
= 입양 유기견 구조
= 목표 계획
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


def _groups(text: str = _GROUPS_TEXT) -> list[tuple[list[str], list[str], bool]]:
    """(heads, members, synonyms) from _GROUPS_TEXT (or ``text``); continuation lines start with spaces."""
    lines: list[str] = []
    for raw in text.splitlines():
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


def pieces(run: str) -> list[str]:
    """The two-letter pieces of a run of Hangul (or other CJK) letters: the terms the index holds for it
    (memory.recall.text; a run of one letter has none)."""
    return [run[i : i + 2] for i in range(len(run) - 1)]


# pieces that begin a word here and are words or common pieces of their own (하이 "hi", 바이 "bye", 어머 "oh my",
# 아파 "it hurts", 자기 "oneself"): a longer word is found by another of its pieces
_COMMON_PIECES = frozenset(
    "하이 바이 어머 아파 와이 그만 시리 자동 자원 프로 케이 파스 배우 남자 여자 라이 달리 자기".split()
)


def _piece(word: str) -> str | None:
    """The piece a word of the groups is found by: its first, or the first that is not a common one."""
    return next((p for p in pieces(word) if p not in _COMMON_PIECES), None)


@cache
def _korean_table() -> dict[tuple[str, ...], dict[str, float]]:
    table: dict[tuple[str, ...], dict[str, float]] = {}
    for heads, members, synonyms in _groups(_KO_GROUPS_TEXT):
        weight = SYNONYM_WEIGHT if synonyms else HYPONYM_WEIGHT
        for h in heads:
            head = tuple(pieces(h))
            found = table.setdefault(head, {})
            for m in members:
                piece = _piece(m)
                if m != h and piece is not None and piece not in head:
                    found[piece] = max(found.get(piece, 0.0), weight)
    return table


def korean_related(word: tuple[str, ...]) -> dict[str, float]:
    """The two-letter pieces related to a Korean word of the question (its pieces, its particle taken off), with
    their weights: those of the words of the groups whose head word it starts with ("악기를": 기타, 이올 ...)."""
    out: dict[str, float] = {}
    table = _korean_table()
    for k in range(1, len(word) + 1):  # each head the word starts with: its first k pieces
        for piece, w in table.get(word[:k], {}).items():
            out[piece] = max(out.get(piece, 0.0), w)
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
