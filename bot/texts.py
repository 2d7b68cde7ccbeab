"""The bot's own user-facing texts, in Korean (default) and English."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TEXTS: dict[str, dict[str, str]] = {
    "error.rate_limit": {
        "ko": "⚠️ 요청이 많아 지금은 답할 수 없어요. 잠시 후 다시 보내 주세요. (저장된 내용은 그대로예요)",
        "en": "⚠️ Too many requests right now. Please try again in a moment. (Nothing was lost.)",
    },
    "error.overloaded": {
        "ko": "⚠️ Claude 서버가 혼잡해요. 잠시 후 다시 보내 주세요.",
        "en": "⚠️ Claude is overloaded. Please try again in a moment.",
    },
    "error.auth": {
        "ko": "⚠️ 지금은 답할 수 없어요: 봇의 Claude API 키가 거부됐어요 (보내신 메시지 문제가 아니에요). 봇 주인이 "
        "고쳐야 해요.",
        "en": "⚠️ I can't answer right now: the bot's Claude API key was refused (not a problem with your "
        "message). The bot's owner has to fix it.",
    },
    "error.timeout": {
        "ko": "⚠️ 답이 너무 오래 걸려 중단했어요. 다시 보내 주세요.",
        "en": "⚠️ The answer took too long and was stopped. Please send it again.",
    },
    "error.connection": {
        "ko": "⚠️ Claude 에 연결하지 못했어요. 잠시 후 다시 보내 주세요.",
        "en": "⚠️ Could not reach Claude. Please try again in a moment.",
    },
    "error.bad_request": {
        "ko": "⚠️ 요청이 거부됐어요 (너무 길거나 형식 문제). 다르게 물어봐 주세요.",
        "en": "⚠️ The request was rejected (too long or malformed). Please rephrase.",
    },
    "error.server": {
        "ko": "⚠️ Claude 쪽에서 오류가 났어요. 다시 보내 주세요.",
        "en": "⚠️ Claude returned an error. Please send it again.",
    },
    "error.empty": {
        "ko": "⚠️ 빈 답이 왔어요. 다시 보내 주세요.",
        "en": "⚠️ The answer was empty. Please send it again.",
    },
    "error.limit": {
        "ko": "⏳ 오늘 쓸 수 있는 양(토큰)을 모두 써서 여기서 멈췄어요. 자정이 지나면 /retry 로 다시 물을 수 있어요.",
        "en": "⏳ Today's allowance (tokens) is used up, so I stopped here. After midnight, /retry asks again.",
    },
    "error.refusal": {
        "ko": "🙅 이 요청에는 답할 수 없어요. 다른 질문을 해 주세요. (이 대화는 기록하지 않았어요)",
        "en": "🙅 I can't help with that request. Please ask something else. (This exchange was not recorded.)",
    },
    "error.cut": {
        "ko": "⚠️ 답이 길어 중간에 잘렸어요 (출력 한도). 더 짧게 답해 달라고 하거나 나눠서 물어봐 주세요.",
        "en": "⚠️ The answer was cut off (output limit). Ask for a shorter answer, or split the question.",
    },
    "error.context_full": {
        "ko": "⚠️ 대화가 모델이 읽을 수 있는 길이를 넘었어요. /reset 으로 새로 시작하거나 잠시 후 다시 보내 주세요.",
        "en": "⚠️ The conversation no longer fits the model's context window. /reset starts afresh; or try later.",
    },
    "error.not_found": {
        "ko": "⚠️ 설정된 Claude 모델을 찾을 수 없어요. 관리자가 /model 로 다른 모델을 골라야 해요.",
        "en": "⚠️ The configured Claude model was not found. The owner can choose another one with /model.",
    },
    "error.too_large": {
        "ko": "⚠️ 요청이 너무 커서 거부됐어요 (첨부 파일이 크거나 너무 많아요). 더 작게 보내 주세요.",
        "en": "⚠️ The request was too large for the API (attachments too big or too many). Please send less.",
    },
    # -- failures the bot's owner must fix (the Claude API errors page; Rate limits page for the spend limits).
    # error.<kind>: what a member sees in Telegram (short, no settings); @owner: the owner in Telegram (told
    # what to fix, in the chat or in a private message); @terminal: the person at the keyboard (the settings
    # to change, no admin, no button). {model}: the model in use
    "error.permission": {
        "ko": "⚠️ 지금은 답할 수 없어요: 봇의 Claude API 키에 이 모델을 쓸 권한이 없어요. 봇 주인이 고쳐야 해요.",
        "en": "⚠️ I can't answer right now: the bot's Claude API key may not use this model. The bot's owner has "
        "to fix it.",
    },
    "error.billing": {
        "ko": "⚠️ 지금은 답할 수 없어요: 봇의 Claude 계정에 결제 문제가 있어요. 봇 주인이 고쳐야 해요.",
        "en": "⚠️ I can't answer right now: the bot's Claude account has a billing problem. The bot's owner has "
        "to fix it.",
    },
    "error.spend_limit": {
        "ko": "⚠️ 지금은 답할 수 없어요: 봇의 Claude 계정이 정해 둔 사용 한도에 닿았어요. 봇 주인이 한도를 올리거나 "
        "기간이 지나야 해요.",
        "en": "⚠️ I can't answer right now: the bot's Claude account reached the spend limit set for it. The "
        "bot's owner can raise it; otherwise it resets later.",
    },
    "error.spend_cap": {
        "ko": "⚠️ 지금은 답할 수 없어요: 봇의 Claude 계정이 이번 달 사용 상한에 닿았어요. 다음 달 1일에 풀리거나 "
        "봇 주인이 상한을 올려야 해요.",
        "en": "⚠️ I can't answer right now: the bot's Claude account reached its monthly spend cap. It resets on "
        "the 1st of next month, unless the bot's owner gets it raised.",
    },
    "error.auth@owner": {
        "ko": "⚠️ Anthropic 이 봇의 API 키를 거부했어요 (401 authentication_error: 형식이 틀렸거나, 폐기됐거나, "
        "만료됨). 서버의 .env 에서 ANTHROPIC_API_KEY 를 올바른 키로 바꾸고 (console.anthropic.com → API keys) 봇을 "
        "다시 시작하세요.",
        "en": "⚠️ Anthropic refused the bot's API key (401 authentication_error: malformed, revoked or expired). "
        "Put a valid key in ANTHROPIC_API_KEY in the server's .env (console.anthropic.com → API keys) and "
        "restart the bot.",
    },
    "error.permission@owner": {
        "ko": "⚠️ 봇의 API 키에 모델 {model} 을(를) 쓸 권한이 없어요 (403 permission_error). Claude Console 에서 "
        "조직의 접근 권한과 워크스페이스 설정을 확인하거나, /model 로 다른 모델을 고르세요.",
        "en": "⚠️ The bot's API key may not use the model {model} (403 permission_error). Check the "
        "organization's access and the workspace settings in the Claude Console, or pick another model with "
        "/model.",
    },
    "error.billing@owner": {
        "ko": "⚠️ Anthropic 이 결제 문제를 알려 왔어요 (402 billing_error): 고칠 때까지 아무도 답을 받지 못해요. "
        "Claude Console (console.anthropic.com) 의 Billing 에서 결제 정보를 확인하세요.",
        "en": "⚠️ Anthropic reports a billing problem (402 billing_error): nobody gets answers until it is fixed. "
        "Check the payment details under Billing in the Claude Console (console.anthropic.com).",
    },
    "error.spend_limit@owner": {
        "ko": "⚠️ 조직이나 워크스페이스에 정해 둔 사용 한도에 닿았어요 (400, spend limit): 기간이 지날 때까지 답할 수 "
        "없어요. Claude Console 의 Billing → Limits 에서 한도를 올리거나 없애세요.",
        "en": "⚠️ The spend limit set for the organization or workspace is reached (400, spend limit): no answers "
        "until it resets. Raise or remove it under Billing → Limits in the Claude Console.",
    },
    "error.spend_cap@owner": {
        "ko": "⚠️ 조직이 사용 등급(tier)의 월 사용 상한에 닿았어요 (429, enforced_spend_limit_reached): 다음 달 1일 "
        "00:00 UTC 까지 답할 수 없어요. 더 일찍 쓰려면 Claude Console 의 Billing 에서 상한 증액을 요청하세요.",
        "en": "⚠️ The organization reached its usage tier's monthly spend cap (429, enforced_spend_limit_reached): "
        "no answers until the 1st of next month, 00:00 UTC. To go on sooner, ask for a higher limit under "
        "Billing in the Claude Console.",
    },
    "error.not_found@owner": {
        "ko": "⚠️ 모델 {model} 을(를) 찾을 수 없어요 (404 not_found_error): /model 로 쓸 수 있는 모델을 고르거나 "
        "ANTHROPIC_MODEL 을 바꾸세요.",
        "en": "⚠️ The model {model} was not found (404 not_found_error): pick an available one with /model, or "
        "change ANTHROPIC_MODEL.",
    },
    "error.permission@terminal": {
        "ko": "⚠️ API 키에 모델 {model} 을(를) 쓸 권한이 없어요 (403 permission_error): Claude Console 에서 조직의 "
        "접근 권한과 워크스페이스 설정을 확인하거나, /model 로 다른 모델을 고르세요 (ANTHROPIC_API_KEY 를 바꿨다면 "
        "채팅을 다시 시작하세요).",
        "en": "⚠️ The API key may not use the model {model} (403 permission_error): check the organization's access "
        "and the workspace settings in the Claude Console, or pick another model with /model (after changing "
        "ANTHROPIC_API_KEY, start the chat again).",
    },
    "error.billing@terminal": {
        "ko": "⚠️ Anthropic 이 결제 문제를 알려 왔어요 (402 billing_error): Claude Console (console.anthropic.com) 의 "
        "Billing 에서 결제 정보를 확인한 뒤 다시 물어보세요.",
        "en": "⚠️ Anthropic reports a billing problem (402 billing_error): check the payment details under Billing "
        "in the Claude Console (console.anthropic.com), then ask again.",
    },
    "error.spend_limit@terminal": {
        "ko": "⚠️ 조직이나 워크스페이스에 정해 둔 사용 한도에 닿았어요 (400, spend limit): Claude Console 의 "
        "Billing → Limits 에서 한도를 올리거나, 한도가 풀린 뒤 다시 물어보세요.",
        "en": "⚠️ The spend limit set for the organization or workspace is reached (400, spend limit): raise it "
        "under Billing → Limits in the Claude Console, or ask again once it resets.",
    },
    "error.spend_cap@terminal": {
        "ko": "⚠️ 조직이 사용 등급의 월 사용 상한에 닿았어요 (429, enforced_spend_limit_reached): 다음 달 1일 00:00 "
        "UTC 에 풀려요. 더 일찍 쓰려면 Claude Console 의 Billing 에서 상한 증액을 요청하세요.",
        "en": "⚠️ The organization reached its usage tier's monthly spend cap (429, enforced_spend_limit_reached): "
        "it resets on the 1st of next month, 00:00 UTC; to go on sooner, ask for a higher limit under Billing in "
        "the Claude Console.",
    },
    "error.system_messages": {
        "ko": "⚠️ 모델이 요청 형식을 거부했어요. 다시 보내 주세요.",
        "en": "⚠️ The model refused the request's layout. Please send it again.",
    },
    "model.current": {
        "ko": "🤖 지금 모델: {name}\n{info}",
        "en": "🤖 Current model: {name}\n{info}",
    },
    "model.others": {"ko": "고를 수 있는 다른 모델: {names}", "en": "Other models available: {names}"},
    "model.usage": {
        "ko": "/model <모델 id> 로 바꾸고, /model refresh 로 정보를 새로 읽어요. 바꾼 모델은 재시작해도 유지돼요.",
        "en": "/model <model id> switches; /model refresh reads the Models API again. A switch outlives restarts.",
    },
    "model.switched": {
        "ko": "✅ 모델을 {name} (으)로 바꿨어요: 모든 대화에, 텔레그램 봇과 터미널 채팅 모두에 적용되고 재시작해도 "
        "유지돼요 (따로 실행 중인 다른 쪽은 다시 시작할 때 바뀌어요). ANTHROPIC_MODEL 설정({configured})은 그대로예요: "
        "/model {configured} 로 되돌려요.\n{info}",
        "en": "✅ Switched to {name} for every chat, in the Telegram bot and the terminal chat alike, and kept "
        "across restarts (the other one, if running now, switches when it restarts). The setting ANTHROPIC_MODEL "
        "({configured}) is unchanged: /model {configured} switches back.\n{info}",
    },
    "model.switched_back": {
        "ko": "✅ 설정된 모델 {name} (ANTHROPIC_MODEL) 로 돌아왔어요: 모든 대화에, 텔레그램 봇과 터미널 채팅 모두에 "
        "적용돼요 (따로 실행 중인 다른 쪽은 다시 시작할 때 바뀌어요).\n{info}",
        "en": "✅ Back to the configured model {name} (ANTHROPIC_MODEL) for every chat, in the Telegram bot and the "
        "terminal chat alike (the other one, if running now, switches when it restarts).\n{info}",
    },
    "model.same": {"ko": "이미 {name} 모델을 쓰고 있어요.", "en": "{name} is already the model in use."},
    "model.unknown": {
        "ko": "⚠️ {name} 모델을 찾을 수 없어요. /model 로 고를 수 있는 모델을 보세요.",
        "en": "⚠️ There is no model {name} on this endpoint. /model lists the available ones.",
    },
    "model.unsupported": {
        "ko": "이 모델({name})은 바꿀 수 없어요.",
        "en": "This model ({name}) cannot be switched.",
    },
    # -- the terminal's wording of errors (error_text(kind, lang, where="terminal")): no admin, no button;
    # the owner at the keyboard is told which setting to change. {model}: the model in use
    "error.auth@terminal": {
        "ko": "⚠️ Anthropic API 키가 거부됐어요 (401 authentication_error): .env 나 환경의 ANTHROPIC_API_KEY 를 "
        "확인하고 (console.anthropic.com → API keys) 채팅을 다시 시작하세요.",
        "en": "⚠️ The Anthropic API key was refused (401 authentication_error): check ANTHROPIC_API_KEY in .env "
        "or the environment (console.anthropic.com → API keys), then start the chat again.",
    },
    "error.not_found@terminal": {
        "ko": "⚠️ 모델 {model} 을(를) 찾을 수 없어요 (404): ANTHROPIC_MODEL 을 쓸 수 있는 모델로 바꾸거나 "
        "/model 로 고르세요.",
        "en": "⚠️ The model {model} was not found (404): set ANTHROPIC_MODEL to an available model, "
        "or pick one with /model.",
    },
    "error.not_found_v1@terminal": {
        "ko": "⚠️ 찾을 수 없다는 답(404)이 왔어요: ANTHROPIC_BASE_URL ({url}) 이 /v1 로 끝나요. 클라이언트가 /v1 을 "
        "붙이니 끝의 /v1 을 지우고 다시 시작하세요.",
        "en": "⚠️ Not found (404): ANTHROPIC_BASE_URL ({url}) ends in /v1, and the client adds /v1 itself: "
        "remove the /v1 and start again.",
    },
    "error.connection@terminal": {
        "ko": "⚠️ {host} 에 연결하지 못했어요: 네트워크나 프록시, ANTHROPIC_BASE_URL 을 확인하세요.",
        "en": "⚠️ Could not reach {host}: check the network, a proxy, or ANTHROPIC_BASE_URL.",
    },
    "error.not_saved@terminal": {
        "ko": "⚠️ 답은 받았지만 저장하지 못했어요 (DATA_DIR {data} 가 가득 찼거나 쓸 수 없어요). 이 대화는 "
        "기억하지 못해요: 디스크 공간과 권한을 확인하세요 (./bot.sh doctor).",
        "en": "⚠️ This answer could not be saved (DATA_DIR {data} is full or not writable), so this exchange "
        "will not be remembered: check the disk space and permissions (./bot.sh doctor).",
    },
    # -- start-up (bot/doctor/preflight.py): the one line a start that cannot go on prints, in the
    # terminal's language; the doctor prints them in English. Never a secret: a setting's name, not its value
    "start.where.token": {
        "ko": "@BotFather 에서 받아요 (/token 으로 다시 볼 수 있어요), 123456789:AAE… 같은 모양",
        "en": "from @BotFather (/token shows it again), like 123456789:AAE…",
    },
    "start.where.key": {
        "ko": "console.anthropic.com 에서 받아요, sk-ant- 로 시작해요",
        "en": "from console.anthropic.com, it starts with sk-ant-",
    },
    "start.not_set": {
        "ko": "{name} 이(가) 설정되지 않았어요: .env 나 환경에 넣어 주세요 ({where})",
        "en": "{name} is not set: put it in .env or the environment ({where})",
    },
    "start.example": {
        "ko": "{name} 이(가) 아직 .env.example 의 예시 값이에요: 본인 것으로 바꿔 주세요 ({where})",
        "en": "{name} is still the example value from .env.example: put in yours ({where})",
    },
    "start.malformed": {
        "ko": "{name} 의 형식이 맞지 않아요 ({n}자; 공백, 따옴표, 잘린 복사?): {where}",
        "en": "{name} is not well-formed ({n} characters; spaces, quotes or a cut copy?): {where}",
    },
    "start.other_key": {
        "ko": "{name} 이(가) Anthropic 키(sk-ant-…) 모양이 아니에요; ANTHROPIC_BASE_URL 의 엔드포인트({host})가 "
        "다른 모양의 키를 쓰면 괜찮아요",
        "en": "{name} does not look like an Anthropic key (sk-ant-…); fine if the endpoint ANTHROPIC_BASE_URL "
        "points at ({host}) uses keys of another form",
    },
    "start.base_v1": {
        "ko": "ANTHROPIC_BASE_URL ({url}) 이 /v1 로 끝나요: 클라이언트가 /v1 을 붙이니 모든 요청이 404 가 돼요. "
        "끝의 /v1 을 지우세요 ({fixed})",
        "en": "ANTHROPIC_BASE_URL ({url}) ends in /v1: the client adds /v1 itself, so every request would be a "
        "404; remove the /v1 ({fixed})",
    },
    "start.model_unknown": {
        "ko": "모델 {model} ({setting}) 은(는) 이 버전이 모르는 이름이에요: 오타가 아닌지 확인하세요 (예: "
        "claude-sonnet-5-5; /model 이 쓸 수 있는 모델을 보여 줘요)",
        "en": "the model {model} ({setting}) is not a name this version knows: check it for a typo (e.g. "
        "claude-sonnet-5-5; /model lists the models your key can use)",
    },
    "start.config": {"ko": "설정이 잘못됐어요: {detail}", "en": "{detail}"},
    "start.data_not_dir": {
        "ko": "DATA_DIR {path} 이(가) 디렉터리가 아니에요 (파일이 있어요): DATA_DIR 을 디렉터리로 바꾸거나 "
        "그 파일을 옮기세요",
        "en": "DATA_DIR {path} is not a directory (a file is in the way): set DATA_DIR to a directory, "
        "or move that file away",
    },
    "start.data_read_only": {
        "ko": "DATA_DIR {path} 이(가) 읽기 전용 파일 시스템에 있어요: DATA_DIR 을 쓸 수 있는 곳으로 바꾸세요 "
        "(Docker 에서는 볼륨)",
        "en": "DATA_DIR {path} is on a read-only file system: set DATA_DIR to a writable place (in Docker, a volume)",
    },
    "start.data_denied": {
        "ko": "DATA_DIR {path} 에 쓸 권한이 없어요 ({file}, 사용자 {user}): 소유자를 바꾸거나 (chown {user} {path}) "
        "DATA_DIR 을 다른 곳으로 하세요; ./bot.sh doctor 가 더 알려 줘요",
        "en": "DATA_DIR {path} is not writable for {user} ({file}): give it to that user (chown {user} {path}) "
        "or set DATA_DIR elsewhere; ./bot.sh doctor explains more",
    },
    "start.data_sub_not_dir": {
        "ko": "DATA_DIR {path} 의 {sub} 이(가) 디렉터리가 아니에요 (파일이 있어요; 봇이 대화를 저장하는 곳이에요): "
        "그 파일을 다른 곳으로 옮기고 다시 시작하세요",
        "en": "DATA_DIR {path}: {sub} is not a directory (a file is in the way where the chats are kept): move "
        "that file elsewhere and start again",
    },
    "start.data_sub_denied": {
        "ko": "DATA_DIR {path} 의 {sub} 에 쓸 권한이 없어요 (사용자 {user}): 소유자를 바꾸거나 (chown -R {user} "
        "{path}) DATA_DIR 을 다른 곳으로 하세요",
        "en": "DATA_DIR {path}: {sub} is not writable for {user}: give it to that user (chown -R {user} {path}) "
        "or set DATA_DIR elsewhere",
    },
    "start.data_sub_read_only": {
        "ko": "DATA_DIR {path} 의 {sub} 이(가) 읽기 전용 파일 시스템에 있어요: 쓸 수 있게 마운트하거나 DATA_DIR 을 "
        "쓸 수 있는 곳으로 바꾸세요",
        "en": "DATA_DIR {path}: {sub} is on a read-only file system: mount it writable or set DATA_DIR to a "
        "writable place",
    },
    "start.data_full": {
        "ko": "DATA_DIR {path} 의 디스크가 가득 찼어요: 공간을 비우거나 DATA_DIR 을 다른 디스크로 하세요",
        "en": "the disk of DATA_DIR {path} is full: free some space or set DATA_DIR to another disk",
    },
    "start.data_other": {
        "ko": "DATA_DIR {path} 을(를) 쓸 수 없어요 ({reason}): ./bot.sh doctor 가 더 알려 줘요",
        "en": "DATA_DIR {path} cannot be used ({reason}): ./bot.sh doctor explains more",
    },
    "start.format": {
        "ko": "DATA_DIR 의 데이터 형식 문제: {detail} (./bot.sh doctor 가 더 자세히 알려줘요)",
        "en": "{detail} (./bot.sh doctor explains more)",
    },
    "error.internal": {
        "ko": "⚠️ 처리 중 오류가 났어요. 다시 보내 주세요.",
        "en": "⚠️ Something went wrong. Please send it again.",
    },
    "error.not_saved": {
        "ko": "⚠️ 답은 드렸지만 저장하지 못했어요 (서버의 저장 공간이 가득 찼거나 쓸 수 없어요). "
        "그래서 이 대화는 기억하지 못해요. 봇 관리자에게 알려 주세요.",
        "en": "⚠️ This answer could not be saved (the server's storage is full or not writable), "
        "so I won't remember this exchange. Please tell the bot's admin.",
    },
    "not_allowed": {
        "ko": "🔒 이 봇은 비공개예요.\n당신의 텔레그램 사용자 ID: {user_id}\n"
        "쓰고 싶다면 이 번호를 봇 주인에게 보내 주세요.",
        "en": "🔒 This bot is private.\nYour Telegram user id: {user_id}\n"
        "To use it, send this number to the bot's owner.",
    },
    "busy.dropped": {
        "ko": "⏳ 아직 앞의 메시지들을 처리하고 있어서 이 메시지는 건너뛰었어요. 답을 받은 뒤에 다시 보내 주세요.",
        "en": "⏳ I'm still working through your earlier messages, so I skipped this one. "
        "Please send it again once I've answered.",
    },
    "text_only": {
        "ko": "지금은 글(텍스트), 사진, PDF와 텍스트 파일만 이해할 수 있어요. 내용을 글로 보내 주세요.",
        "en": "I can only read text, photos, PDFs and text files for now. Please send it as text.",
    },
    # -- access: pairing, the owner's commands, groups (bot/tg/access.py) --
    "pair.done": {
        "ko": "✅ 이제 당신이 이 봇의 주인이에요 (ID {user_id}). 페어링 코드는 더 이상 쓸 수 없어요.\n"
        "다른 사람을 들이려면 그 사람의 ID 로 /allow <ID>, 목록은 /users, 빼기는 /deny <ID>. "
        "그룹에서는 그 그룹에서 /allow 를 보내세요.",
        "en": "✅ You are now this bot's owner (id {user_id}). The pairing code can no longer be used.\n"
        "To let someone in: /allow <their id>; the list: /users; to remove: /deny <id>. "
        "For a group, send /allow in that group.",
    },
    "pair.wrong": {"ko": "🔒 코드가 맞지 않아요.", "en": "🔒 That code is not valid."},
    "owner_only": {"ko": "이 명령은 봇 주인만 쓸 수 있어요.", "en": "Only the bot's owner can use this command."},
    "allow.usage": {
        "ko": "들일 사람의 텔레그램 ID 를 적어 주세요. 예: /allow 123456789\n"
        "(그 사람이 봇에 말을 걸면 ID 를 알려 줘요. 그룹에서 /allow 만 보내면 그 그룹을 열어요.)",
        "en": "Give the person's Telegram id, e.g. /allow 123456789\n"
        "(The bot tells people their id when they write to it. /allow alone in a group opens that group.)",
    },
    "allow.done": {"ko": "✅ {who} 님을 들였어요.", "en": "✅ {who} may now use the bot."},
    "allow.already": {"ko": "{who} 님은 이미 쓸 수 있어요.", "en": "{who} can already use the bot."},
    "allow.config": {
        "ko": "{who} 님은 설정(ALLOWED_USERS)에 있어서 이미 쓸 수 있어요.",
        "en": "{who} is in ALLOWED_USERS and can already use the bot.",
    },
    "allow.group": {
        "ko": "✅ 이 그룹을 열었어요. 이제 그룹의 누구든 저를 부르면 답해요.",
        "en": "✅ This group is open now: I answer anyone here who mentions me.",
    },
    "allow.group_already": {"ko": "이 그룹은 이미 열려 있어요.", "en": "This group is already open."},
    "deny.usage": {
        "ko": "뺄 사람의 ID 를 적어 주세요. 예: /deny 123456789 (목록: /users). "
        "그룹에서 /deny 만 보내면 그 그룹을 닫아요.",
        "en": "Give the id to remove, e.g. /deny 123456789 (list: /users). /deny alone in a group closes that group.",
    },
    "deny.done": {"ko": "🚫 {who} 님은 이제 쓸 수 없어요.", "en": "🚫 {who} can no longer use the bot."},
    "deny.already": {"ko": "{who} 님은 목록에 없어요.", "en": "{who} is not in the list."},
    "deny.owner": {"ko": "주인은 뺄 수 없어요.", "en": "The owner cannot be removed."},
    "deny.config": {
        "ko": "{who} 님은 설정(ALLOWED_USERS)에 있어요. 빼려면 .env 에서 지우고 봇을 다시 시작하세요.",
        "en": "{who} is in ALLOWED_USERS: remove them from .env and restart the bot.",
    },
    "deny.group": {
        "ko": "🚫 이 그룹을 닫았어요. 이제 허용된 사람에게만 답해요.",
        "en": "🚫 This group is closed: I answer only allowed people here.",
    },
    "deny.group_already": {"ko": "이 그룹은 열려 있지 않아요.", "en": "This group was not open."},
    "allow.group_id": {
        "ko": "✅ 그룹 {chat} 을(를) 열었어요. 그 그룹의 누구든 저를 부르면 답해요.",
        "en": "✅ Group {chat} is open now: I answer anyone there who mentions me.",
    },
    "allow.group_id_already": {"ko": "그룹 {chat} 은(는) 이미 열려 있어요.", "en": "Group {chat} is already open."},
    "deny.group_id": {
        "ko": "🚫 그룹 {chat} 을(를) 닫았어요. 이제 그곳에서는 허용된 사람에게만 답해요.",
        "en": "🚫 Group {chat} is closed: I answer only allowed people there.",
    },
    "deny.group_id_already": {"ko": "그룹 {chat} 은(는) 열려 있지 않아요.", "en": "Group {chat} was not open."},
    "allow.not_person": {
        "ko": "{who} 은(는) 한 사람이 아니라 텔레그램의 대리 계정(익명 관리자·채널·서비스)이에요. 들일 수 없어요.",
        "en": "{who} is not a person but one of Telegram's stand-in accounts (anonymous admins, channels, "
        "service messages): it cannot be allowed.",
    },
    "users.header": {"ko": "👥 봇을 쓸 수 있는 사람", "en": "👥 Who may use the bot"},
    "users.owner": {"ko": "주인", "en": "owner"},
    "users.config": {"ko": "설정", "en": "config"},
    "users.added": {"ko": "{at} 추가", "en": "added {at}"},
    "users.groups": {"ko": "열린 그룹", "en": "Open groups"},
    "users.footer": {
        "ko": "들이기: /allow <ID> · 빼기: /deny <ID> · 사용량: /stats all",
        "en": "Add: /allow <id> · remove: /deny <id> · usage: /stats all",
    },
    "group.admin_only": {
        "ko": "그룹에서는 봇 주인이나 그룹 관리자만 이 명령을 쓸 수 있어요.",
        "en": "In groups only the bot's owner or a group admin can use this command.",
    },
    # -- cost: daily limits and /stats --
    "limit.messages": {
        "ko": "⏳ 오늘 쓸 수 있는 질문 {limit}개를 모두 썼어요. {when}에 다시 쓸 수 있어요.",
        "en": "⏳ You have used today's {limit} questions. You can ask again from {when}.",
    },
    "limit.tokens": {
        "ko": "⏳ 오늘 쓸 수 있는 양(토큰 {limit}개)을 모두 썼어요. {when}에 다시 쓸 수 있어요.",
        "en": "⏳ You have used today's allowance ({limit} tokens). You can ask again from {when}.",
    },
    "stats.usage": {
        "ko": "💰 사용량 (요약·도구 포함, 예상 비용)\n오늘: 질문 {q_today}개, {tokens_today} → {cost_today}\n"
        "전체: 질문 {q_total}개, {tokens_total} → {cost_total}",
        "en": "💰 Usage (summaries and tools included, estimated cost)\nToday: {q_today} questions, "
        "{tokens_today} → {cost_today}\nIn total: {q_total} questions, {tokens_total} → {cost_total}",
    },
    "stats.terminal_header": {
        "ko": "💰 사용량 (요약·도구 포함, 예상 비용)",
        "en": "💰 Usage (summaries and tools included, estimated cost)",
    },
    "stats.chat": {
        "ko": "이 대화 ({chat}, 전체): 질문 {q}개, {tokens}",
        "en": "This conversation ({chat}, in total): {q} questions, {tokens}",
    },
    "stats.today": {"ko": "오늘 (터미널): 질문 {q}개, {tokens}", "en": "Today (terminal): {q} questions, {tokens}"},
    "stats.month": {
        "ko": "이번 달 (터미널): 질문 {q}개, {tokens}",
        "en": "This month (terminal): {q} questions, {tokens}",
    },
    "stats.searches": {
        "ko": " · 웹 검색 {n}회",
        "en": " · {n} web searches",
    },
    "stats.tokens": {
        "ko": "입력 {input} · 출력 {output} · 캐시 쓰기 {cache_write} · 캐시 읽기 {cache_read}",
        "en": "input {input} · output {output} · cache write {cache_write} · cache read {cache_read}",
    },
    "stats.all_header": {
        "ko": "📊 사람별 사용량 (오늘 / 전체, 예상 비용)",
        "en": "📊 Usage per person (today / in total, estimated cost)",
    },
    "stats.all_line": {
        "ko": "• {who}: 오늘 질문 {q_today} · 토큰 {t_today} · {cost_today} / "
        "전체 질문 {q_total} · 토큰 {t_total} · {cost_total}",
        "en": "• {who}: today {q_today} questions · {t_today} tokens · {cost_today} / in total {q_total} questions · "
        "{t_total} tokens · {cost_total}",
    },
    "stats.all_empty": {"ko": "아직 기록된 사용량이 없어요.", "en": "No usage recorded yet."},
    "stats.all_sum": {
        "ko": "합계: 오늘 {cost_today} / 전체 {cost_total}",
        "en": "Sum: today {cost_today} / in total {cost_total}",
    },
    "stats.limits": {
        "ko": "하루 한도 (주인 제외): 질문 {messages}, 토큰 {tokens}",
        "en": "Daily limits (all but the owner): {messages} questions, {tokens} tokens",
    },
    "stats.unlimited": {"ko": "없음", "en": "none"},
    "stats.terminal": {"ko": "터미널 (키보드 앞의 주인)", "en": "terminal (the owner at the keyboard)"},
    "cost.unknown": {"ko": "가격 모름 ({models})", "en": "price unknown ({models})"},
    "cost.partial": {"ko": "{cost} + 가격 모름 ({models})", "en": "{cost} + price unknown ({models})"},
    "retry.nothing": {
        "ko": "다시 물을 질문이 없어요.",
        "en": "There is no question to retry.",
    },
    # -- Telegram: /start and /help (HTML; {bot} is the bot's @username) --
    "help": {
        "ko": "안녕하세요! 저는 Claude 로 답하는 비서예요. 🧠\n\n"
        "<b>기억</b>: 이 채팅의 대화는 서버의 파일에 저장돼서, 봇이 다시 시작해도 지난 대화를 기억해요. "
        "최근 대화는 그대로, 오래된 대화는 요약으로 기억해요. 채팅마다 기억이 따로예요.\n"
        "<b>사실</b>: 이름, 생일, 알레르기처럼 오래 갈 내용은 따로 기억해 두고, 새 대화를 시작해도 잊지 않아요.\n"
        "<b>회상</b>: 몇 달 전 대화나 새로 시작하기 전의 대화도 질문과 관련 있으면 찾아서 함께 봐요.\n"
        "<b>사진</b>: 사진에 설명이나 질문을 붙여 보내면 함께 봐요.\n"
        "<b>문서</b>: PDF나 텍스트·코드 파일을 보내면 읽어요. 질문은 파일 설명(캡션)에 적어 주세요.\n"
        "<b>답장</b>: 어떤 메시지에 답장하거나 일부를 인용하면 그 내용을 함께 봐요.\n"
        '<b>알림</b>: "내일 아침 9시에 약 먹으라고 알려 줘"처럼 말하면 그때 ⏰ 로 알려 드려요.\n'
        "<b>그룹</b>: 저를 {bot} 로 부르거나 제 메시지에 답장할 때만 답해요.\n\n"
        "<b>명령어</b>\n"
        "/history — 다음 메시지와 함께 보낼 최근 대화\n"
        "/summary — 오래된 대화의 요약\n"
        "/search &lt;말&gt; — 지난 대화 전체에서 찾기\n"
        "/memory — 기억하고 있는 사실\n"
        "/remember &lt;내용&gt; — 사실 하나 기억시키기\n"
        "/forget &lt;번호&gt; — 사실 잊게 하기 (/forget all: 모두)\n"
        "/reset — 새 대화 시작 (이전 대화는 보관돼요, 지우지 않아요)\n"
        "/retry — 마지막 질문 다시 묻기\n"
        "/reminders — 예정된 알림 (취소: /reminders cancel &lt;번호&gt;)\n"
        "/stats — 저장된 메시지, 사용한 토큰과 예상 비용\n"
        "/export — 대화 기록 전체를 파일로 받기 (/export md: 마크다운)\n"
        "/import — ChatGPT·Claude·텔레그램 내보내기 파일을 캡션으로 붙여 보내면 기억으로 가져오기 (주인만)\n"
        "/help — 이 도움말",
        "en": "Hi! I'm an assistant that answers with Claude. 🧠\n\n"
        "<b>Memory</b>: this chat is saved in files on the server, so I remember earlier conversations, "
        "even after a restart. Recent messages word for word, older ones as a summary. Every chat has "
        "its own memory.\n"
        "<b>Facts</b>: durable things like your name, birthday or allergies are kept separately and stay even "
        "after you start a fresh conversation.\n"
        "<b>Recall</b>: conversations from months ago, even before a /reset, are searched and brought back "
        "when they matter to your question.\n"
        "<b>Photos</b>: send a photo with a caption or a question and I'll look at it.\n"
        "<b>Documents</b>: send a PDF or a text or code file and I'll read it; put your question in the caption.\n"
        "<b>Replies</b>: reply to a message (or quote part of it) and I'll see what you are answering.\n"
        '<b>Reminders</b>: say "remind me tomorrow at 9 to take my pills" and I\'ll send you a ⏰ then.\n'
        "<b>Groups</b>: I answer only when you mention {bot} or reply to one of my messages.\n\n"
        "<b>Commands</b>\n"
        "/history — the recent messages sent along with your next one\n"
        "/summary — the summary of the older conversation\n"
        "/search &lt;words&gt; — search all earlier conversations\n"
        "/memory — the facts I remember about you\n"
        "/remember &lt;text&gt; — make me remember a fact\n"
        "/forget &lt;number&gt; — make me forget a fact (/forget all: every one)\n"
        "/reset — start a fresh conversation (the old one is archived, not deleted)\n"
        "/retry — ask the last question again\n"
        "/reminders — pending reminders (cancel: /reminders cancel &lt;number&gt;)\n"
        "/stats — messages stored, tokens used and estimated cost\n"
        "/export — get the whole history as a file (/export md: Markdown)\n"
        "/import — send a ChatGPT, Claude or Telegram export with this caption to bring it into memory (owner)\n"
        "/help — this help",
    },
    # -- Telegram: the command menu (set_my_commands) --
    "cmd.help": {"ko": "도움말", "en": "Help"},
    "cmd.history": {"ko": "다음 메시지와 함께 보낼 최근 대화", "en": "Recent messages sent with your next one"},
    "cmd.summary": {"ko": "오래된 대화의 요약", "en": "Summary of the older conversation"},
    "cmd.reset": {"ko": "새 대화 시작 (이전 대화는 보관)", "en": "Start a fresh conversation (old one archived)"},
    "cmd.retry": {"ko": "마지막 질문 다시 묻기", "en": "Ask the last question again"},
    "cmd.stats": {"ko": "메시지 수, 사용한 토큰과 예상 비용", "en": "Messages, tokens used and estimated cost"},
    "cmd.import": {"ko": "ChatGPT·Claude·텔레그램 기록 가져오기", "en": "Import ChatGPT, Claude or Telegram history"},
    "cmd.export": {"ko": "대화 기록 전체를 파일로 받기", "en": "Get the whole history as a file"},
    "cmd.memory": {"ko": "기억하고 있는 사실 보기", "en": "The facts I remember about you"},
    "cmd.remember": {"ko": "사실 하나 기억시키기", "en": "Make me remember a fact"},
    "cmd.forget": {"ko": "사실 잊게 하기 (번호 또는 all)", "en": "Make me forget a fact (number or all)"},
    "cmd.search": {"ko": "지난 대화 전체에서 찾기", "en": "Search all earlier conversations"},
    "cmd.allow": {"ko": "사람(ID)이나 이 그룹을 들이기", "en": "Let a person (id) or this group in"},
    "cmd.deny": {"ko": "사람(ID)이나 이 그룹을 빼기", "en": "Remove a person (id) or this group"},
    "cmd.users": {"ko": "봇을 쓸 수 있는 사람", "en": "Who may use the bot"},
    # -- Telegram: command replies --
    "history.empty": {
        "ko": "아직 이 채팅에 저장된 대화가 없어요. 다음 메시지는 기억 없이 보내요.",
        "en": "Nothing is stored in this chat yet; your next message is sent without history.",
    },
    "history.header": {
        "ko": "다음 메시지와 함께 보낼 최근 대화 ({n}개):",
        "en": "The recent messages sent along with your next one ({n}):",
    },
    "history.summary_note": {
        "ko": "(그보다 오래된 대화는 요약으로 함께 보내요: /summary)",
        "en": "(Older messages are sent as a summary: /summary)",
    },
    "summary.none": {
        "ko": "아직 요약이 없어요. 대화가 길어지면 오래된 부분을 요약해서 기억해요.",
        "en": "No summary yet. When the conversation grows, older parts are summarized.",
    },
    "summary.header": {"ko": "📝 지금까지의 요약:", "en": "📝 The summary so far:"},
    "reset.done": {
        "ko": "🆕 새 대화를 시작했어요. 이전 대화는 지우지 않고 보관했어요 ({name}).",
        "en": "🆕 Started a fresh conversation. The previous one was archived, not deleted ({name}).",
    },
    "reset.empty": {
        "ko": "🆕 새 대화예요. 보관할 이전 대화가 없었어요.",
        "en": "🆕 This is a fresh conversation; there was nothing to archive.",
    },
    "stats": {
        "ko": "📊 이 채팅의 기록\n저장된 대화: {size}\n요약: {summary}\n기억하는 사실: {facts}개",
        "en": "📊 This chat\nConversation stored: {size}\nSummary: {summary}\nFacts remembered: {facts}",
    },
    "export.wait": {
        "ko": "⏳ 내보내기는 {minutes}분에 한 번만 할 수 있어요. {left}분 뒤에 다시 보내 주세요.",
        "en": "⏳ /export works once every {minutes} minutes. Please send it again in {left} min.",
    },
    "stats.covers": {"ko": "앞의 메시지 {n}개를 요약함", "en": "covers the first {n} messages"},
    "stats.no_summary": {"ko": "아직 없음", "en": "none yet"},
    "export.empty": {
        "ko": "내보낼 대화가 없어요 (이 채팅에 저장된 메시지가 없어요).",
        "en": "Nothing to export: no messages are stored in this chat.",
    },
    "export.caption": {
        "ko": "이 채팅의 대화 기록 전체예요 (보관·가져온 대화 포함, 한 줄에 메시지 하나, JSON).",
        "en": "This chat's whole history (archived and imported conversations included; one message per line, JSON).",
    },
    "export.caption_md": {
        "ko": "이 채팅의 대화 기록 전체예요 (보관·가져온 대화 포함, 마크다운).",
        "en": "This chat's whole history (archived and imported conversations included; Markdown).",
    },
    "export.too_big": {
        "ko": "대화 기록이 너무 커서 텔레그램으로 보낼 수 없어요. 서버에서 {command} 로 받을 수 있어요.",
        "en": "The history is too big to send through Telegram. On the server: {command}",
    },
    "export.usage": {
        "ko": "/export 는 JSON 줄(.jsonl), /export md 는 마크다운(.md)으로 보내요.",
        "en": "/export sends JSON lines (.jsonl), /export md sends Markdown (.md).",
    },
    # -- importing history: /import (Telegram), python -m bot import (Telegram and terminal texts) --
    "import.done": {
        "ko": "📥 {source}에서 가져왔어요: 대화 {conversations}개, 메시지 {messages}개 ({first} ~ {last}).",
        "en": "📥 Imported from {source}: {conversations} conversations, {messages} messages ({first} to {last}).",
    },
    "import.nothing_new": {
        "ko": "새로 가져올 것이 없어요: 메시지 {present}개는 이미 가져온 것이에요.",
        "en": "Nothing new: the {present} messages in it were imported before.",
    },
    "import.present": {
        "ko": "이미 가져온 메시지 {present}개는 건너뛰었어요.",
        "en": "{present} messages already imported were left as they are.",
    },
    "import.skipped": {
        "ko": "⚠️ 형식이 맞지 않는 대화 {n}개는 가져오지 않았어요: {problems}",
        "en": "⚠️ {n} malformed conversations were left out: {problems}",
    },
    "import.error": {
        "ko": "⚠️ {file}: {error}",
        "en": "⚠️ {file}: {error}",
    },
    "import.partial": {
        "ko": "그 앞까지 온전히 읽은 대화만 가져왔어요.",
        "en": "Only the whole conversations read before that were imported.",
    },
    "import.none": {"ko": "아무것도 가져오지 않았어요.", "en": "Nothing was imported."},
    "import.indexing": {
        "ko": "검색 색인은 뒤에서 만들어져요 (그동안에도 답해요; /search 가 진행 상황을 알려 줘요).",
        "en": "It is indexed in the background (questions are answered meanwhile; /search shows how far it is).",
    },
    "import.how": {
        "ko": "ChatGPT·Claude의 conversations.json(또는 그 .zip)이나 텔레그램 데스크톱의 result.json 파일을 "
        "캡션 /import 와 함께 보내 주세요 (20MB까지). 더 큰 파일은 서버에서: python -m bot import 파일",
        "en": "Send ChatGPT's or Claude's conversations.json (or its .zip), or Telegram Desktop's result.json, "
        "with the caption /import (up to 20 MB). Bigger files on the server: python -m bot import FILE",
    },
    "import.too_big": {
        "ko": "이 파일은 {size}MB예요. 봇은 20MB까지만 받을 수 있어요. 서버에서 가져와 주세요: "
        "python -m bot import 파일",
        "en": "This file is {size} MB; bots can download files up to 20 MB. Import it on the server: "
        "python -m bot import FILE",
    },
    "import.owner_only": {
        "ko": "기록을 가져오는 것은 봇 주인만 할 수 있어요.",
        "en": "Only the bot's owner can import history.",
    },
    # -- facts: /memory, /remember, /forget (Telegram and terminal) --
    "memory.empty": {
        "ko": "🧠 아직 기억하고 있는 사실이 없어요.\n대화 중에 알려 주시면 제가 기억해 두고, "
        "/remember <내용> 으로 직접 알려 줄 수도 있어요.",
        "en": "🧠 I don't know any facts about you yet.\nTell me in the conversation and I'll keep them, "
        "or use /remember <text>.",
    },
    "memory.header": {
        "ko": "🧠 제가 기억하고 있는 사실 ({n}개, 대화를 새로 시작해도 남아요):",
        "en": "🧠 What I remember about you ({n}, kept even after /reset):",
    },
    "memory.footer": {
        "ko": "지우기: /forget <번호> · 모두 지우기: /forget all · 추가: /remember <내용>",
        "en": "Remove one: /forget <number> · all: /forget all · add: /remember <text>",
    },
    "remember.usage": {
        "ko": "기억할 내용을 함께 적어 주세요. 예: /remember 내 생일은 3월 14일",
        "en": "Add what to remember, e.g. /remember My birthday is March 14",
    },
    "memory.by_command": {"ko": "{who} · /remember", "en": "{who} · /remember"},
    "memory.by_tool": {"ko": "{who}의 요청으로 Claude가", "en": "Claude, asked by {who}"},
    "memory.by_unknown": {"ko": "누가 추가했는지 기록 없음", "en": "who added it: not recorded"},
    "memory.from": {"ko": "{what}에서", "en": "from {what}"},
    "memory.from.document": {"ko": "문서", "en": "a document"},
    "memory.from.photo": {"ko": "사진", "en": "a photo"},
    "memory.from.forwarded": {"ko": "전달된 메시지", "en": "a forwarded message"},
    "memory.web": {"ko": "웹을 읽은 뒤", "en": "after reading the web"},
    "memory.web_pages": {"ko": "웹을 읽은 뒤 — {pages}", "en": "after reading the web — {pages}"},
    "memory.who.you": {"ko": "본인", "en": "you"},
    "memory.who.terminal": {"ko": "주인(터미널)", "en": "the owner at the terminal"},
    "remember.done": {"ko": "🧠 기억했어요 ({id}번): {text}", "en": "🧠 Remembered (#{id}): {text}"},
    "remember.known": {"ko": "이미 기억하고 있어요 ({id}번): {text}", "en": "I already know that (#{id}): {text}"},
    "fact.empty": {"ko": "기억할 내용이 비어 있어요.", "en": "There is nothing to remember in that."},
    "fact.too_long": {
        "ko": "너무 길어요 (최대 {limit}자). 오래 기억할 핵심만 적어 주세요.",
        "en": "That's too long (at most {limit} characters). Keep just the point worth remembering.",
    },
    "fact.too_many": {
        "ko": "기억할 수 있는 사실이 가득 찼어요 ({limit}개). /memory 에서 보고 /forget 으로 정리해 주세요.",
        "en": "My fact memory is full ({limit} facts). See /memory and remove some with /forget.",
    },
    "fact.too_much": {
        "ko": "이 그룹의 사실 메모리가 가득 찼어요 (모두 합쳐 최대 {limit}자). "
        "/memory 에서 보고 관리자가 /forget 으로 정리해 주세요.",
        "en": "This group's fact memory is full ({limit} characters in all). See /memory; an admin can remove "
        "some with /forget.",
    },
    "fact.unreadable": {
        "ko": "사실 파일을 읽을 수 없어서 바꾸지 않았어요. 서버 관리자에게 알려 주세요.",
        "en": "The facts file is unreadable, so nothing was changed. Please tell the bot's admin.",
    },
    "forget.usage": {
        "ko": "지울 사실의 번호를 적어 주세요. 예: /forget 3 (번호는 /memory 에서), 모두: /forget all",
        "en": "Give the number of the fact to remove, e.g. /forget 3 (numbers in /memory), or /forget all",
    },
    "forget.done": {"ko": "🗑 잊었어요 ({id}번): {text}", "en": "🗑 Forgotten (#{id}): {text}"},
    "forget.unknown": {
        "ko": "{id}번 사실은 없어요. /memory 로 목록을 보세요.",
        "en": "There is no fact #{id}. /memory lists them.",
    },
    "forget.all": {
        "ko": "🗑 기억하던 사실 {n}개를 모두 잊었어요. (파일은 지우지 않고 보관했어요: {name})",
        "en": "🗑 Forgot all {n} facts. (The file was archived, not deleted: {name})",
    },
    "forget.all_empty": {"ko": "잊을 사실이 없어요.", "en": "There are no facts to forget."},
    # -- recall: /search (Telegram and terminal) --
    "search.usage": {
        "ko": "찾을 말을 함께 적어 주세요. 예: /search 자물쇠 번호",
        "en": "Add the words to look for, e.g. /search lock code",
    },
    "search.none": {
        "ko": "🔎 '{query}' — 관련된 지난 대화를 찾지 못했어요. 그 말이 나오거나 뜻이 가까운 메시지가 없어요.",
        "en": "🔎 Nothing related to '{query}' was found in the earlier conversations: no message uses those "
        "words or means anything close.",
    },
    "search.header": {
        "ko": "🔎 '{query}' — 지난 대화에서 찾은 {n}개 (관련 높은 순):",
        "en": "🔎 '{query}' — {n} matches in earlier conversations, best first:",
    },
    "search.building": {
        "ko": "⏳ 이 대화의 긴 기록을 아직 색인하는 중이에요 ({percent}% 완료). 지금은 색인된 부분에서만 찾았어요 — "
        "잠시 후 다시 찾아 보세요.",
        "en": "⏳ This chat's long history is still being indexed ({percent}% done): only that part was searched. "
        "Try again in a while.",
    },
    "search.tool_building": {
        "ko": "(이 대화의 기록은 아직 색인 중이에요: {percent}% 완료. 나머지 부분은 아직 검색되지 않았어요.)",
        "en": "(This chat's history is still being indexed, {percent}% done: the rest of it was not searched yet.)",
    },
    "unknown_command": {
        "ko": "모르는 명령어예요. /help 로 쓸 수 있는 명령어를 볼 수 있어요.",
        "en": "Unknown command. /help lists the commands.",
    },
    # -- Telegram: groups, photos, documents --
    "group.empty": {
        "ko": "네, 부르셨나요? 저를 부르면서 질문도 함께 적어 주세요.",
        "en": "Yes? Mention me together with your question.",
    },
    "photo.too_big": {
        "ko": "사진이 너무 커요 ({mb} MB 까지). 더 작은 사진으로 보내 주세요.",
        "en": "The photo is too big (up to {mb} MB). Please send a smaller one.",
    },
    "photo.unreadable": {
        "ko": "이 이미지를 읽을 수 없어요. JPEG, PNG, GIF, WebP 사진으로 다시 보내 주세요.",
        "en": "I could not read this image. Please send it again as a JPEG, PNG, GIF or WebP picture.",
    },
    "photo.too_many_pixels": {
        "ko": "이미지의 해상도가 너무 높아요 ({mp}백만 화소까지). 더 작은 이미지로 보내 주세요.",
        "en": "The image has too many pixels (up to {mp} megapixels). Please send a smaller one.",
    },
    "photo.failed": {
        "ko": "사진을 받아오지 못했어요. 다시 보내 주세요.",
        "en": "I couldn't download the photo. Please send it again.",
    },
    "document.unsupported": {
        "ko": "이 형식의 파일은 읽을 수 없어요. PDF(20 MB, 100쪽까지), 텍스트·코드 파일(.txt .md .csv .json .py 등, "
        "200 KB까지), 사진(JPEG, PNG, GIF, WebP)을 읽을 수 있어요.",
        "en": "I can't read this kind of file. I read PDFs (up to 20 MB and 100 pages), text and code files "
        "(.txt .md .csv .json .py …, up to 200 KB) and pictures (JPEG, PNG, GIF, WebP).",
    },
    # -- documents (PDF and text files) --
    "document.default_question": {
        "ko": "이 문서를 읽고 핵심을 요약해 줘.",
        "en": "Please read this document and summarize the key points.",
    },
    "document.too_big": {
        "ko": "파일이 너무 커요 ({limit_mb} MB 까지 받을 수 있어요). 더 작은 파일로 보내 주세요.",
        "en": "The file is too big (I can receive up to {limit_mb} MB). Please send a smaller one.",
    },
    "document.text_too_big": {
        "ko": "텍스트 파일이 너무 커요 ({limit_kb} KB 까지). 필요한 부분만 보내 주세요.",
        "en": "The text file is too big (up to {limit_kb} KB). Please send just the part that matters.",
    },
    "document.too_many_pages": {
        "ko": "PDF가 너무 길어요 ({pages}쪽, {limit}쪽까지 읽을 수 있어요). 필요한 쪽만 나눠서 보내 주세요.",
        "en": "The PDF is too long ({pages} pages; I can read up to {limit}). Please send the pages that matter.",
    },
    "document.encrypted": {
        "ko": "암호가 걸린 PDF는 읽을 수 없어요. 암호를 푼 파일로 보내 주세요.",
        "en": "I can't read password-protected (encrypted) PDFs. Please send an unlocked copy.",
    },
    "document.unreadable": {
        "ko": "이 PDF를 열 수 없어요 (손상되었거나 PDF가 아니에요). 다시 저장해서 보내 주세요.",
        "en": "I couldn't open this PDF (it is damaged or not a PDF). Please save it again and resend it.",
    },
    "document.not_text": {
        "ko": "이 파일을 텍스트로 읽을 수 없어요 (UTF-8 텍스트가 아니에요). UTF-8로 저장해서 보내 주세요.",
        "en": "I couldn't read this file as text (it is not UTF-8 text). Please save it as UTF-8 and resend it.",
    },
    "document.failed": {
        "ko": "파일을 받아오지 못했어요. 다시 보내 주세요.",
        "en": "I couldn't download the file. Please send it again.",
    },
    # -- reminders: delivery notes, /reminders (Telegram and terminal) --
    "reminder.late": {
        "ko": "⏰ {text}\n({when} 알림이에요. 그때 봇이 꺼져 있어서 지금 보내요.)",
        "en": "⏰ {text}\n(This reminder was due {when}; the bot was offline then.)",
    },
    "reminder.interrupted": {
        "ko": "⏰ {text}\n(전송 중 중단되었을 수 있는 알림이에요 · {when}. 이미 받으셨다면 무시해 주세요.)",
        "en": "⏰ {text}\n(Sending this reminder ({when}) may have been interrupted; ignore it if you already got it.)",
    },
    "reminders.held": {
        "ko": "⏸ 보류된 알림 {n}개 (설정한 사람이나 그룹의 접근이 해제되어 보내지 않고 보관 중):",
        "en": "⏸ {n} held reminders (kept, not sent: whoever set them no longer has access there):",
    },
    "reminders.held_where": {"ko": "채팅 {chat}, 설정 {user}", "en": "chat {chat}, set by {user}"},
    "reminders.empty": {
        "ko": '⏰ 예정된 알림이 없어요. "내일 아침 9시에 약 먹으라고 알려 줘"처럼 말하면 맞춰 둘게요.',
        "en": '⏰ No reminders pending. Say something like "remind me tomorrow at 9 to take my pills".',
    },
    "reminders.header": {"ko": "⏰ 예정된 알림 {n}개 ({zone}):", "en": "⏰ {n} pending reminders ({zone}):"},
    "reminders.footer": {"ko": "취소: /reminders cancel <번호>", "en": "Cancel one: /reminders cancel <number>"},
    "reminders.usage": {
        "ko": "/reminders 로 예정된 알림을 보고, /reminders cancel <번호> 로 취소해요. "
        "한 사람이 맞춘 알림을 한꺼번에: /reminders cancel user <사용자 번호>",
        "en": "/reminders lists the pending reminders; /reminders cancel <number> cancels one, "
        "/reminders cancel user <user id> all of one person's.",
    },
    "reminders.cancelled_from": {
        "ko": "🗑 사용자 {user}이(가) 맞춘 알림 {n}개를 취소했어요.",
        "en": "🗑 Cancelled {n} reminders set by user {user}.",
    },
    "reminders.none_from": {
        "ko": "사용자 {user}이(가) 맞춘 예정된 알림이 없어요.",
        "en": "User {user} has no pending reminders here.",
    },
    "reminders.cancelled": {
        "ko": "🗑 알림 #{id}을 취소했어요 ({when}): {text}",
        "en": "🗑 Cancelled reminder #{id} ({when}): {text}",
    },
    "reminders.unknown": {
        "ko": "예정된 알림 #{id}이 없어요. /reminders 로 목록을 보세요.",
        "en": "There is no pending reminder #{id}. /reminders lists them.",
    },
    "reminders.unreadable": {
        "ko": "알림 파일을 읽을 수 없어서 바꾸지 않았어요. 서버 관리자에게 알려 주세요.",
        "en": "The reminders file is unreadable, so nothing was changed. Please tell the bot's admin.",
    },
    "cmd.reminders": {"ko": "예정된 알림 보기·취소", "en": "Pending reminders (list, cancel)"},
}


PROGRESS: dict[str, dict[str, str]] = {
    "search_memory": {"ko": "🔎 기억을 찾는 중…", "en": "🔎 Searching memory…"},
    "remember": {"ko": "📝 기억해 두는 중…", "en": "📝 Saving to memory…"},
    "forget": {"ko": "🧹 기억에서 지우는 중…", "en": "🧹 Removing from memory…"},
    "set_reminder": {"ko": "⏰ 알림을 맞추는 중…", "en": "⏰ Setting a reminder…"},
    "list_reminders": {"ko": "⏰ 알림을 확인하는 중…", "en": "⏰ Checking reminders…"},
    "cancel_reminder": {"ko": "⏰ 알림을 취소하는 중…", "en": "⏰ Cancelling a reminder…"},
    "web_search": {"ko": "🌐 웹에서 찾는 중…", "en": "🌐 Searching the web…"},
    "web_fetch": {"ko": "📄 웹 페이지를 읽는 중…", "en": "📄 Reading a web page…"},
    "no_search": {
        "ko": "⚠️ 웹 검색을 하지 못해 검색 없이 답했어요.",
        "en": "⚠️ Could not search the web; answered without it.",
    },
    "tool": {"ko": "⚙️ 처리하는 중…", "en": "⚙️ Working on it…"},
    "cut": {"ko": "✂️ (답이 길어 여기서 잘렸어요)", "en": "✂️ (The answer was cut off here: it was too long.)"},
    "context_full": {
        "ko": "✂️ (대화가 너무 길어 답이 여기서 끊겼어요. /reset 으로 새로 시작할 수 있어요)",
        "en": "✂️ (The conversation is too long: the answer stopped here. /reset starts afresh.)",
    },
}
"""What the user sees in the streamed preview while a tool runs, and notices after a cut answer."""


def progress_text(name: str, lang: str = "ko") -> str:
    return lookup(PROGRESS, name if name in PROGRESS else "tool", lang)


def lang_of_text(text: str) -> str:
    """Korean when the text has Hangul (or no letters at all), else English."""
    if any("\uac00" <= c <= "\ud7a3" or "\u3131" <= c <= "\u318e" for c in text):
        return "ko"
    return "en" if any(c.isalpha() for c in text) else "ko"


def lang_of(language_code: str | None) -> str:
    """Korean by default and for Korean users; English for any other known language."""
    if not language_code or language_code.lower().startswith("ko"):
        return "ko"
    return "en"


def lookup(table: Mapping[str, Mapping[str, str]], key: str, lang: str = "ko", **kwargs: Any) -> str:
    """The text ``key`` of ``table`` in ``lang`` (falls back to Korean), formatted with ``kwargs``."""
    entry = table[key]
    text = entry.get(lang) or entry["ko"]
    return text.format(**kwargs) if kwargs else text


def t(key: str, lang: str = "ko", **kwargs: Any) -> str:
    """The bot's text ``key`` in ``lang`` (falls back to Korean), formatted with ``kwargs``."""
    return lookup(TEXTS, key, lang, **kwargs)


def error_text(kind: str, lang: str = "ko", where: str = "telegram", **details: Any) -> str:
    """The message for a failed answer of ``kind`` (a ModelError kind), worded for ``where`` it is shown.

    ``where`` is the front end: "telegram" (the default wording: an admin, the /retry button) or
    "terminal". A kind with a text ``error.<kind>@<where>`` uses it, else the default ``error.<kind>``;
    an unknown kind reads as ``error.internal``. ``details`` fill the wording's fields (e.g. ``model``).
    """
    key = f"error.{kind}"
    if key not in TEXTS:
        key = "error.internal"
    worded = f"{key}@{where}"
    key = worded if worded in TEXTS else key
    return t(key, lang, **details) if details else t(key, lang)
