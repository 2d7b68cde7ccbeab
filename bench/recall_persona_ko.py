# ruff: noqa: E501  (tables of sentences)
"""The persona generator in Korean: two friends telling their lives over months, in Korean chat.

bench.recall_persona's conversations (the same sessions, episodes told and told again, the friend's
reactions, small talk, photos with a caption) with Korean people, episodes, small talk and questions,
written as friends write to each other (반말, ``ㅋㅋ``, a name called with 야). The kinds of question
are the same: one fact, when, several sessions ("민지의 취미는 뭐야?", "수아는 캠핑을 몇 번 갔어?"), a
guess ("지호는 도자기 전시회를 좋아할까?"), the same fact asked of the other person, and questions no
conversation answers. bench.recall_korean measures facts asked in other particles, spacing and units;
this measures what a Korean chat's several-sessions and inference questions find.

The names (family name and given name; friends use the given name) end in a vowel, so every
question's particle (는, 가, 의, 에게) is right for both. Harder questions, in words memory.recall.lexicon's
Korean groups do not relate to their evidence (THREADS, GUESSES, as bench.recall_persona_hard's), unless
``hard=False``; no mentions in passing (bench.recall_persona_spread's sentences are English).

    python -m bench.recall_eval --gen persona --style ko --seeds 1-6
"""

from __future__ import annotations

from bench import recall_persona_when
from bench.recall_persona import Conversation, generate
from bench.recall_tables import Tables, Topic

PEOPLE = [
    ("김민지", "민지", ""), ("이수아", "수아", ""), ("박지호", "지호", ""), ("최하나", "하나", ""),
    ("정유리", "유리", ""), ("강서희", "서희", ""), ("윤재희", "재희", ""), ("한도희", "도희", ""),
]  # fmt: skip

TOPICS = [
    Topic("pottery", "hobby",
          [("S", "있잖아, 나 드디어 {weekday}에 도자기 공방 등록했어! 흙 만지는 게 이렇게 힐링될 줄 몰랐어."),
           ("O", "도자기? 완전 멋지다, {s}! 뭐 만들었어?"),
           ("S", "{color} 유약 바른 작은 {thing}. 삐뚤빼뚤한데 너무 마음에 들어. [사진 공유: 탁자 위의 {color} 도자기 {thing}]")],
          [("temporal", "{S}는 언제 도자기 공방에 등록했어?", 0), ("single", "{S}는 도자기 수업에서 뭘 만들었어?", 2),
           ("open", "{S}는 도자기 전시회를 좋아할까?", 0), ("single", "{S}는 뭐 할 때 힐링된다고 했어?", 0)],
          {"thing": ["그릇", "머그컵", "꽃병", "접시"], "color": ["파란", "초록", "하얀", "주황"]},
          again=[("S", "이번 주에 공방 또 갔어! 물레로 {thing2} 빚었는데 이번엔 반듯하게 나왔어."),
                 ("O", "이제 진짜 도예가네!")],
          again_asks=[("multi", "{S}가 흙으로 만든 건 뭐뭐 있어?", ["2", "a0"])]),
    Topic("painting", "hobby",
          [("S", "{o}, 나 요즘 다시 그림 그려. 어제 완성한 건데 {scene} 그림이야. [사진 공유: {scene} 그림]"),
           ("O", "와, 색감 진짜 선명하다! 뭐 보고 그린 거야?"),
           ("S", "아침 산책하다가 봤는데 계속 생각나더라고. 그림 그리면 하루 피로가 싹 풀려.")],
          [("single", "{S}가 최근에 그린 그림은 뭐야?", 0), ("single", "{S}는 하루 피로를 어떻게 풀어?", 2),
           ("open", "{S}에게 화방 상품권을 선물하면 좋아할까?", 0)],
          {"scene": ["호수 위 일출", "해바라기 밭", "폭풍 속 등대", "오래된 느티나무"]},
          again=[("S", "캔버스 하나 또 끝냈어, 이번엔 {scene2} 그림. [사진 공유: {scene2} 그림]")],
          again_asks=[("multi", "{S}는 지금까지 뭘 그렸어?", ["0", "a0"])]),
    Topic("camping", "hobby",
          [("S", "애들이랑 {park}에서 캠핑하고 방금 왔어! 모닥불에 마시멜로 구워 먹으면서 이야기했어."),
           ("O", "완전 재밌었겠다! 날씨는 어땠어?"),
           ("S", "밤엔 추웠는데 별이 진짜 대박이었어. 애들이 벌써 또 가자고 난리야.")],
          [("temporal", "{S}는 언제 캠핑 갔어?", 0), ("single", "{S}는 애들이랑 어디서 캠핑했어?", 0)],
          {"park": ["호숫가", "솔숲 캠핑장", "국립공원", "계곡"]},
          again=[("S", "이번엔 {park2}에서 또 캠핑했는데 별똥별 쏟아지는 거 봤어!")],
          again_asks=[("multi", "{S}는 캠핑을 몇 번 갔어?", ["0", "a0"])]),
    Topic("hiking", "hobby",
          [("S", "{weekday}에 {trail} 다녀왔어, 왕복 13킬로. 아직도 다리가 후들거려!"),
           ("O", "13킬로! 정상에서 경치는 어땠어?"),
           ("S", "계곡이랑 폭포까지 다 보였어. 올라간 보람이 있었지.")],
          [("temporal", "{S}는 언제 {trail}에 다녀왔어?", 0), ("single", "{S}는 어느 산에 올라갔어?", 0),
           ("single", "{S}는 정상에서 뭘 봤어?", 2)],
          {"trail": ["북한산 백운대", "관악산", "설악산 울산바위", "지리산 천왕봉"]}),
    Topic("swimming", "hobby",
          [("S", "집 근처 수영장 등록해서 요즘 매일 아침 출근 전에 수영해."),
           ("O", "매일 아침? 대단하다, {s}!")],
          [("single", "{S}는 매일 아침 출근 전에 뭐 해?", 0), ("open", "{S}는 아침형 인간일까?", 0)]),
    Topic("running", "hobby",
          [("S", "지난 {weekday}에 {cause} 기부를 위한 자선 {race} 뛰었어. 힘들었는데 진짜 뿌듯하더라!"),
           ("O", "대박! 기록은 얼마나 나왔어?"),
           ("S", "{time} 정도. 최고 기록은 아닌데 결승선에서 사람들이 응원해 주는 게 감동이었어.")],
          [("temporal", "{S}는 언제 자선 마라톤을 뛰었어?", 0), ("single", "{S}는 달리기로 어디에 기부했어?", 0),
           ("single", "{S}는 완주하는 데 얼마나 걸렸어?", 2)],
          {"race": ["5킬로 마라톤", "10킬로 마라톤", "하프 마라톤"], "cause": ["정신 건강 캠페인", "어린이 병원", "암 연구"],
           "time": ["40분", "2시간", "1시간 10분"]}),
    Topic("yoga", "hobby",
          [("S", "요즘 일주일에 세 번 요가 시작했는데 마음이 진짜 차분해져."),
           ("O", "오 좋다! 어떤 요가 해?"),
           ("S", "주로 하타 요가. 동네 작은 요가원인데 선생님이 엄청 친절해.")],
          [("temporal", "{S}는 언제 요가를 시작했어?", 0), ("single", "{S}는 어떤 요가를 해?", 2),
           ("open", "{S}는 명상에 관심이 있을까?", 0)],
          again=[("S", "선생님이 오늘 5분 동안 자세 버티게 해서 온몸이 덜덜 떨렸어 ㅋㅋ")],
          again_asks=[("multi", "{S}는 요가 수업에서 어떤 일이 있었어?", ["2", "a0"])]),
    Topic("puppy", "pet",
          [("S", "우리 강아지 입양했어! 이름은 {pet}야. [사진 공유: 러그 위의 골든 리트리버 강아지]"),
           ("O", "너무 귀여워!! 몇 개월이야?"),
           ("S", "이제 10주 됐어. 밤새 신발을 물어뜯어 ㅋㅋ")],
          [("single", "{S}네 강아지 이름이 뭐야?", 0), ("temporal", "{S}는 언제 강아지를 입양했어?", 0),
           ("open", "{S}에게 목줄이 필요할까?", 0)],
          {"pet": ["코코", "보리", "두부", "초코"]},
          again=[("S", "{pet} 오늘 처음으로 애견 훈련소 갔는데 앉아 배웠어!")],
          again_asks=[("multi", "{S}는 강아지랑 뭘 했어?", ["0", "a0"])]),
    Topic("cat", "pet",
          [("S", "새로 들인 고양이 {cat} 소개할게! 내가 일할 때 노트북 위에서 자. [사진 공유: 키보드 위에서 자는 회색 고양이]"),
           ("O", "세상에, 너무 사랑스럽다!")],
          [("single", "{S}의 고양이 이름은 뭐야?", 0), ("open", "{S}는 동물을 좋아할까?", 0)],
          {"cat": ["나비", "모모", "루루"]}),
    Topic("guitar", "instrument",
          [("S", "중고 기타 하나 샀어, 유튜브 영상 보면서 코드 배우는 중."),
           ("O", "오 멋지다! 무슨 곡 연습해?"),
           ("S", "'{song}' 하나만, 아직 엉망이야 ㅋㅋ 손가락 끝이 너무 아파.")],
          [("single", "{S}는 기타로 무슨 곡을 연습해?", 2), ("open", "{S}는 캠프파이어에서 반주를 할 수 있을까?", 0)],
          {"song": ["벚꽃 엔딩", "좋은 날", "걱정말아요 그대"]},
          again=[("S", "기타 레슨 처음 받았어! 선생님이 바레 코드 잡는 법 알려 줬어.")],
          again_asks=[("multi", "{S}는 기타를 어떻게 배우고 있어?", ["0", "a0"])]),
    Topic("violin", "instrument",
          [("S", "10년 만에 바이올린 다시 꺼냈어. 매일 밤 스케일 연습해."),
           ("O", "와, 어릴 때 했던 거야?"),
           ("S", "응, 여덟 살 때부터 했었어. 다시 하니까 너무 좋다.")],
          [("single", "{S}는 몇 살 때 바이올린을 시작했어?", 2), ("open", "{S}는 어릴 때 음악 레슨을 받았을까?", 0)]),
    Topic("school", "career",
          [("S", "나 {subject} 공부하러 다시 학교 가기로 했어. 나 같은 일 겪는 사람들 돕고 싶어."),
           ("O", "와, 진짜 큰 결정이다! 응원할게."),
           ("S", "내 상담 선생님이 내 인생을 바꿔 줬거든. 그걸 돌려주고 싶어.")],
          [("single", "{S}는 무슨 공부를 하러 학교에 가?", 0), ("open", "{S}는 어떤 직업을 가지려고 할까?", 0),
           ("temporal", "{S}는 언제 학교로 돌아가기로 했어?", 0)],
          {"subject": ["심리학", "사회복지학", "상담학"]},
          again=[("S", "수업 첫 과제로 에세이 썼어, 주제는 {subject}.")],
          again_asks=[("multi", "{S}는 공부에 대해 뭐라고 했어?", ["0", "a0"])]),
    Topic("shelter", "cause",
          [("S", "토요일마다 유기견 보호소에서 봉사하기 시작했어, 주로 기부 물품 정리해."),
           ("O", "멋지다, {s}. 힘들지 않아?"),
           ("S", "좀 힘든데 애들 보면 다 잊어버려.")],
          [("single", "{S}는 주말마다 어디서 봉사해?", 0), ("open", "{S}는 동물 복지에 관심이 있을까?", 0)]),
    Topic("bazaar", "cause",
          [("S", "{cause2} 돕는다고 동네에서 바자회 열었는데 {amount} 모았어!"),
           ("O", "진짜 대단하다! 뭘 팔았어?"),
           ("S", "직접 구운 쿠키랑 머핀. 새벽 세 시까지 구웠어 ㅋㅋ")],
          [("single", "{S}는 바자회에서 얼마를 모았어?", 0), ("single", "{S}는 바자회에서 뭘 팔았어?", 2),
           ("temporal", "{S}는 언제 바자회를 열었어?", 0)],
          {"cause2": ["지역 푸드뱅크", "노숙인 쉼터", "작은 도서관"], "amount": ["80만 원", "120만 원", "50만 원"]}),
    Topic("trip", "travel",
          [("S", "{city} 여행 갔다가 방금 돌아왔어! {sight} 진짜 최고였어."),
           ("O", "부럽다! 뭐가 제일 좋았어?"),
           ("S", "길거리 음식! 아직도 생각나.")],
          [("temporal", "{S}는 언제 {city}에 다녀왔어?", 0), ("single", "{S}는 최근에 어디로 여행 갔어?", 0)],
          {"city": ["교토", "리스본", "다낭", "타이베이"], "sight": ["야경", "골목 시장", "바다"]},
          again=[("S", "다음 달에 {city2} 가는 비행기표 끊었어!")],
          again_asks=[("multi", "{S}가 여행 간 곳이나 갈 곳은 어디야?", ["0", "a0"])]),
    Topic("moving", "home",
          [("S", "드디어 {town}에 새 집으로 이사했어! 박스가 산더미지만 벌써 내 집 같아."),
           ("O", "축하해! 동네는 어때?"),
           ("S", "조용하고 바로 앞에 공원이 있어. 애들이 너무 좋아해.")],
          [("single", "{S}는 어느 도시로 이사했어?", 0), ("single", "{S}의 새 동네는 어때?", 2),
           ("temporal", "{S}는 언제 이사했어?", 0)],
          {"town": ["대전", "부산", "춘천", "수원"]}),
    Topic("car", "purchase",
          [("S", "차 샀어! {car}, 색은 {carcolor}."),
           ("O", "오 축하해! 첫 차야?"),
           ("S", "응, 이제 버스 안 기다려도 돼.")],
          [("single", "{S}는 무슨 차를 샀어?", 0), ("open", "{S}는 요즘도 대중교통을 자주 이용할까?", 2)],
          {"car": ["아반떼", "쏘렌토", "캐스퍼"], "carcolor": ["노란색", "흰색"]}),
    Topic("concert", "event",
          [("S", "어젯밤에 {band} 콘서트 갔다 왔어, {o}! 소리 질러서 목이 다 쉬었어."),
           ("O", "완전 부럽다! 무슨 노래가 제일 좋았어?")],
          [("single", "{S}는 누구 콘서트에 갔어?", 0), ("temporal", "{S}는 언제 {band} 콘서트에 갔어?", 0)],
          {"band": ["아이유", "잔나비", "데이식스"]}),
    Topic("museum", "family",
          [("S", "주말에 애들이랑 {place} 갔는데 공룡 뼈 보고 난리 났어!"),
           ("O", "애들이 엄청 좋아했겠다!")],
          [("single", "{S}는 주말에 애들이랑 어디 갔어?", 0), ("temporal", "{S}는 언제 애들이랑 {place}에 갔어?", 0)],
          {"place": ["자연사 박물관", "어린이 과학관"]},
          again=[("S", "애들이 생일에 또 {place} 가고 싶대.")],
          again_asks=[("multi", "{S}는 애들이랑 뭘 했어?", ["0", "a0"])]),
    Topic("reading", "reading",
          [("S", "요즘 '{book}' 읽는데 손을 못 놓겠어."),
           ("O", "나도 그 책 궁금했어! 어때?"),
           ("S", "마음이 따뜻해지는 얘기야. 다 읽으면 빌려줄게.")],
          [("single", "{S}는 요즘 무슨 책을 읽어?", 0), ("open", "{S}는 독서 모임에 들어가고 싶어할까?", 0)],
          {"book": ["채식주의자", "아몬드", "불편한 편의점"]}),
    Topic("ankle", "health",
          [("S", "축구하다가 발목 접질려서 몇 주 동안 목발 짚어야 해."),
           ("O", "헐, 괜찮아? 많이 아파?"),
           ("S", "걸을 때만. 의사가 쉬고 얼음찜질하래.")],
          [("single", "{S}는 어쩌다 다쳤어?", 0), ("temporal", "{S}는 언제 발목을 다쳤어?", 0),
           ("open", "{S}는 운동을 좋아할까?", 0)],
          again=[("S", "드디어 목발 뗐어, 걷는 게 어색해.")],
          again_asks=[("multi", "{S}의 발목은 어떻게 됐어?", ["0", "a0"])]),
]  # fmt: skip

MULTI_CATS = {
    "hobby": ["{S}의 취미는 뭐야?", "{S}는 쉬는 날에 주로 뭐 하면서 놀아?"],
    "pet": ["{S}는 어떤 반려동물을 키워?"],
    "instrument": ["{S}는 무슨 악기를 연주해?"],
    "cause": ["{S}는 지역 사회를 위해 어떤 일을 해?"],
    "family": ["{S}는 가족이랑 뭘 했어?"],
}

SMALL = [
    "{o}! 잘 지냈어? 연락 줘서 반가워!", "{o}, 오랜만이다! 요즘 뭐 새로운 거 있어?",
    "안녕 {o}, 잘 지내지? 이번 주 회사 일이 너무 많았어.", "{o}, 진짜 오랜만이다! 그동안 일이 엄청 많았어.",
    "난 잘 지내, 물어봐 줘서 고마워! 애들 때문에 정신없지 뭐.", "맨날 똑같지 뭐. 요즘 균형 잡으려고 노력 중이야.",
    "와 진짜 잘됐다, {o}! 내가 다 기쁘다.", "그렇게 말해 줘서 너무 고마워. 항상 응원해 줘서 고마워.",
    "맞아. 가족이 최고야.", "무슨 말인지 알아, 인생이 롤러코스터 같을 때가 있지.",
    "ㅋㅋㅋ 완전 너답다! 너무 좋아.", "대박이다, 진짜 자랑스러워!",
    "너도 너 자신 잘 챙겨야 해, 알지?", "완전 공감. 자기 관리 진짜 중요해.",
    "고마워, {o}! 너랑 얘기하면 항상 기분이 좋아져.", "암튼 내 얘기는 그만! 너는 요즘 어때?",
    "또 소식 전할게! 몸 잘 챙겨.", "잘 가 {o}! 또 얘기하자, 다들 안부 전해 줘.",
    "그래! 조만간 또 얘기하자.", "좋은 한 주 보내, {o}! 다음 얘기 기대할게.",
    "몇 주 동안 엄청 바빴는데 좋은 쪽으로 바빴어.", "주말엔 그냥 집에서 조용히 쉬었어.",
    "요즘 날씨가 너무 좋아서 밖에 많이 나갔어.", "올해 진짜 빨리 가는 것 같아!",
    "와, 그거 감당하기 쉽지 않겠다. 기분은 좀 어때?", "진짜 힘들었겠다.",
    "얘기하고 싶으면 언제든 연락해, 알지?", "응원해 주는 사람이 있다는 게 큰 힘이 돼.",
    "완전 재밌었겠다!", "그런 추억 너무 좋다, 얘기해 줘서 고마워.",
    "응, 요즘 가족이랑 시간 많이 보내려고 해.", "솔직히 그 휴식이 진짜 필요했어.",
    "나한테 좀 더 너그러워지는 법을 배우는 중이야.", "결국 작은 것들이 중요한 거지, 그치?",
    "넌 항상 날 웃게 해, {o}.", "좋은 생각이다, 나도 해 봐야겠다!",
]  # fmt: skip

# the friend's own chatter on the same topics (no facts asked about)
ECHO = {
    "hobby": ["나도 그런 취미 있으면 좋겠다, 퇴근하면 저녁이 없어.", "나 그림 한 번 그려 봤는데 완전 망했어 ㅋㅋ",
              "지난 주말에 공원 잠깐 산책했어, 별거 없었어.", "운동 좀 해야지 말만 하고 있어."],
    "pet": ["옆집 개가 밤새 짖어서 미치겠어.", "나도 언젠가 반려동물 키우고 싶은데 집주인이 안 된대."],
    "instrument": ["나 어릴 때 피아노 쳤는데 다 까먹었어.", "음악 들으면 항상 기분이 나아져."],
    "family": ["애들이 일주일 내내 싸워서 휴가가 필요해!", "일요일에 가족끼리 저녁 먹었는데 시끄러웠지만 재밌었어."],
    "career": ["회사 일 스트레스야, 팀장이 마감을 계속 바꿔.", "가끔 이직 생각해."],
    "cause": ["지난주에 안 입는 옷 기부했어, 정리하니까 기분 좋더라.", "우리 동네 사람들 진짜 서로 잘 도와줘."],
    "travel": ["나 휴가가 너무 필요해.", "공항은 스트레스인데 새로운 곳 가는 건 좋아."],
    "reading": ["책은 맨날 사는데 안 읽어.", "요즘 출퇴근길에 오디오북 들어."],
    "health": ["드디어 치과 다녀왔어, 다 괜찮대!", "하루 종일 앉아 있어서 허리 아파."],
    "home": ["월세가 계속 올라.", "언젠가 바닷가 근처에 살고 싶어."],
    "event": ["콘서트 안 간 지 몇 년 됐다.", "집에서 팝콘 먹으면서 영화 봤어."],
    "purchase": ["요즘 다 너무 비싸.", "인터넷 쇼핑 좀 그만해야 하는데."],
}  # fmt: skip

OFF_TOPIC = [
    "{S}는 어디서 얼룩말을 봤어?", "{S}의 혈액형은 뭐야?", "{S}는 무슨 프로그래밍 언어로 코딩해?",
    "{S}는 배관공한테 얼마 줬어?", "{S}네 집 와이파이 비밀번호가 뭐야?", "{S}는 어느 축구팀 응원해?",
    "{S}는 초밥집에서 뭐 시켰어?", "{S}는 물 새는 지붕 고쳤어?", "{S}가 제일 좋아하는 칵테일은 뭐야?",
    "{S}는 선거에 대해 어떻게 생각했어?", "{S}는 요트 이름을 뭐라고 지었어?", "{S}는 무슨 타투를 했어?",
]  # fmt: skip

# Harder questions (as bench.recall_persona_hard's): asked in words the Korean groups of memory.recall.lexicon do not
# relate to their evidence. A thread through several topics (the evidence: the line telling each episode) ...
THREADS = [
    ("{S}는 몸 관리를 어떻게 해?", ("hiking", "swimming", "running", "yoga")),
    ("{S}는 도시를 벗어나서 뭘 했어?", ("camping", "hiking", "trip")),
    ("{S}한테 요즘 생긴 큰 변화는 뭐야?", ("school", "moving", "car")),
    ("{S}는 어디에 돈을 썼어?", ("car", "guitar", "trip", "moving")),
    ("{S}는 마음을 돌보려고 뭘 해?", ("yoga", "painting", "swimming")),
    ("{S}가 손으로 직접 만든 건 뭐야?", ("pottery", "painting")),
    ("{S}는 소중한 사람들이랑 어디 놀러 갔어?", ("camping", "museum", "trip")),
    ("{S}는 다른 사람들을 어떻게 돕고 있어?", ("shelter", "running", "bazaar")),
    ("{S}네 집에 사는 털 달린 식구는 누구누구야?", ("puppy", "cat")),
]  # fmt: skip
# ... and a guess from one episode: (topic, question, index of the evidence line in the topic's ``say``)
GUESSES = [
    ("pottery", "{S}에게 앞치마를 선물하면 잘 쓸까?", 0),
    ("painting", "{S}는 새 붓 세트를 갖고 싶어할까?", 0),
    ("camping", "{S}는 야생에서 지내는 걸 잘 견딜까?", 0),
    ("hiking", "{S}는 체력이 좋을까?", 0),
    ("swimming", "{S}에게 물안경을 선물하면 좋아할까?", 0),
    ("running", "{S}는 좋은 일에 관심이 많을까?", 0),
    ("yoga", "{S}는 마음챙김에 관심이 있을까?", 0),
    ("puppy", "{S}는 매일 산책을 나가야 할까?", 0),
    ("cat", "{S}네 집에 털복숭이 친구가 있을까?", 0),
    ("guitar", "{S}는 손가락에 굳은살이 생겼을까?", 0),
    ("violin", "{S}는 어릴 때 악보를 읽을 줄 알았을까?", 0),
    ("school", "{S}는 사람 마음에 관한 책을 좋아할까?", 0),
    ("shelter", "{S}는 주말을 남을 위해 쓸까?", 0),
    ("bazaar", "{S}는 손이 많이 가는 간식도 만들 줄 알까?", 2),
    ("trip", "{S}는 여권이 있을까?", 0),
    ("reading", "{S}는 책벌레일까?", 0),
    ("ankle", "{S}는 이번 달에 춤추러 갈 수 있을까?", 0),
    ("moving", "{S}는 최근에 주소가 바뀌었을까?", 0),
    ("concert", "{S}는 시끄러운 밤 외출을 즐길까?", 0),
    ("museum", "{S}는 부모일까?", 0),
]  # fmt: skip

# the harder "when" questions (bench.recall_persona_when): the event in other words than it was told in (the lexicon
# relates some of them; relate no more, or it measures itself), and one of two episodes by its month
WHEN_WORDS = [
    ("pottery", "{S}는 언제 공예 수업을 듣기 시작했어?"),
    ("painting", "{S}는 언제 미술 작품을 마무리했어?"),
    ("camping", "{S}는 언제 가족이랑 텐트에서 잤어?"),
    ("hiking", "{S}는 언제 긴 산행을 했어?"),
    ("running", "{S}는 언제 모금 행사에 참가했어?"),
    ("yoga", "{S}는 언제 스트레칭 수업을 다니기 시작했어?"),
    ("puppy", "{S}네 가족은 언제 새 반려동물을 맞았어?"),
    ("cat", "{S}는 언제 새 식구를 들였어?"),
    ("guitar", "{S}는 언제 현악기를 장만했어?"),
    ("school", "{S}는 언제 진학을 결심했어?"),
    ("shelter", "{S}는 언제 무보수로 시간을 내기 시작했어?"),
    ("bazaar", "{S}는 언제 동네에서 모금을 했어?"),
    ("trip", "{S}는 언제 외국 여행을 마쳤어?"),
    ("moving", "{S}는 언제 거처를 옮겼어?"),
    ("concert", "{S}는 언제 공연을 보러 갔어?"),
    ("museum", "{S}는 언제 아이들이랑 견학을 갔어?"),
    ("ankle", "{S}는 언제 발을 다쳤어?"),
]
WHEN_MONTHS = {
    "pottery": "{S}는 {m}월 언제 공방에서 작업했어?",
    "painting": "{S}는 {m}월 언제 그림을 완성했어?",
    "camping": "{S}는 {m}월 언제 캠핑 갔어?",
    "puppy": "{S}는 {m}월 언제 강아지 얘기를 했어?",
    "guitar": "{S}는 {m}월 언제 기타 얘기를 했어?",
}

# one fact in other words than it was told in (bench.recall_persona_single; the evidence the topic's first line)
SINGLE_WORDS = [
    ("pottery", "{S}는 새로 무슨 공예를 배우기 시작했어?"),
    ("painting", "{S}는 요즘 캔버스에 뭘 완성했어?"),
    ("camping", "{S}는 아이들이랑 어디서 밤을 보냈어?"),
    ("hiking", "{S}는 어느 등산로를 걸었어?"),
    ("swimming", "{S}는 일하러 가기 전에 무슨 운동을 해?"),
    ("running", "{S}는 좋은 일을 위해 어떤 대회에 나갔어?"),
    ("yoga", "{S}는 마음을 가라앉히려고 일주일에 몇 번씩 뭘 해?"),
    ("puppy", "{S}네 집에 새로 온 동물은 뭐야?"),
    ("cat", "{S}네 새 반려동물은 뭐야?"),
    ("guitar", "{S}는 음악을 배우려고 뭘 장만했어?"),
    ("violin", "{S}는 십 년 만에 어떤 악기를 다시 잡았어?"),
    ("school", "{S}는 대학에서 무슨 전공을 하려고 해?"),
    ("shelter", "{S}는 어디서 무보수로 시간을 내?"),
    ("trip", "{S}는 최근에 어느 나라에서 돌아왔어?"),
    ("moving", "{S}는 지금 어느 도시에 살아?"),
    ("car", "{S}는 무슨 자동차를 장만했어?"),
    ("concert", "{S}는 어떤 가수 공연을 봤어?"),
    ("museum", "{S}는 아이들을 데리고 어디로 나들이 갔어?"),
    ("ankle", "{S}는 발이 어떻게 된 거야?"),
]

KOREAN = Tables(
    PEOPLE, TOPICS, SMALL, ECHO, MULTI_CATS, OFF_TOPIC, THREADS, GUESSES,
    weekdays=("금요일", "토요일", "일요일", "화요일"), mentions=False, when_words=WHEN_WORDS, when_months=WHEN_MONTHS,
    single_words=SINGLE_WORDS, when_forms=recall_persona_when.FORMS_KO,
)  # fmt: skip


def generate_ko(seed: int, *, hard: bool = True) -> Conversation:
    """One Korean conversation and its questions (the ``named`` layout: "이름: 내용", both people named); ``hard``:
    with the harder questions (THREADS, GUESSES)."""
    return generate(seed, layout="named", hard=hard, tables=KOREAN)
