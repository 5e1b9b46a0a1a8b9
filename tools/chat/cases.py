"""The chat-template cases: bundled-format templates x conversations, Jinja feature templates,
and error cases. render_reference.py renders them with the reference."""

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Get the weather forecast for a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"},
                                                           "days": {"type": "integer", "description": "Number of days to forecast"},
                                                           "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                          "required": ["city"]}}}
CURRENCY = {"type": "function", "function": {"name": "convert_currency", "description": "Convert an amount between currencies.",
            "parameters": {"type": "object", "properties": {"amount": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}},
                           "required": ["amount", "from", "to"]}}}
TOOLS = [WEATHER, CURRENCY]

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


def call(name, args, as_string=False, cid=None):
    import json
    c = {"type": "function", "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False) if as_string else args}}
    if cid:
        c["id"] = cid
    return c


CONVERSATIONS = {
    "single-turn": dict(messages=[SYSTEM, {"role": "user", "content": "What is the capital of France?"}], add_generation_prompt=True),
    "no-system": dict(messages=[{"role": "user", "content": "Hi there!"}], add_generation_prompt=True),
    "no-generation-prompt": dict(messages=[SYSTEM, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"}]),
    "multi-turn-reasoning": dict(messages=[
        {"role": "user", "content": "What is 2 + 2?"},
        {"role": "assistant", "content": "4.", "reasoning_content": "Simple arithmetic."},
        {"role": "user", "content": "And times 3?"},
        {"role": "assistant", "content": "12.", "reasoning_content": "4 * 3 = 12."},
    ]),
    "reasoning-alias-fields": dict(messages=[
        {"role": "user", "content": "Think first."},
        {"role": "assistant", "content": "Done.", "reasoning": "Via the `reasoning` key.", "tool_calls": None},
    ], add_generation_prompt=False),
    "tool-call-and-response": dict(messages=[
        SYSTEM,
        {"role": "user", "content": "What will the weather be like in Berlin over the next three days?"},
        {"role": "assistant", "content": None, "tool_calls": [call("get_weather", {"city": "Berlin", "days": 3}, cid="call_1")]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"city\": \"Berlin\", \"forecast\": [{\"day\": \"Thu\", \"high_c\": 6}]}"},
    ], tools=TOOLS, add_generation_prompt=True),
    "parallel-tool-calls": dict(messages=[
        {"role": "user", "content": "Weather in Paris and 東京, and 100 EUR in JPY?"},
        {"role": "assistant", "content": "Let me check.", "reasoning_content": "Three calls in parallel.",
         "tool_calls": [call("get_weather", {"city": "Paris", "days": 1}, cid="c1"),
                        call("get_weather", {"city": "東京", "unit": "celsius"}, as_string=True, cid="c2"),
                        call("convert_currency", {"amount": 100.0, "from": "EUR", "to": "JPY"}, cid="c3")]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"high_c\": 9}"},
        {"role": "tool", "tool_call_id": "c2", "content": "{\"high_c\": 14}"},
        {"role": "tool", "tool_call_id": "c3", "content": "{\"result\": 16250.5}"},
    ], tools=TOOLS, add_generation_prompt=True),
    "parallel-tool-calls-mapping-args": dict(messages=[
        {"role": "user", "content": "Weather in Paris and Zürich?"},
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Paris", "days": 2}),
                                             call("get_weather", {"city": "Zürich", "unit": "celsius", "days": 1})]},
        {"role": "tool", "content": {"high_c": 9}},
        {"role": "tool", "content": "{\"high_c\": 4}"},
        {"role": "assistant", "content": "Paris 9 °C, Zürich 4 °C."},
    ], tools=TOOLS, add_generation_prompt=False),
    "thinking-disabled": dict(messages=[{"role": "user", "content": "Quick: 7 * 6?"}], add_generation_prompt=True,
                              kwargs={"enable_thinking": False}),
    "thinking-enabled": dict(messages=[{"role": "user", "content": "Prove that √2 is irrational."}], add_generation_prompt=True,
                             kwargs={"enable_thinking": True}),
    "unicode-and-quotes": dict(messages=[SYSTEM, {"role": "user", "content": "Ünïcödé \"quotes\" 'single' \\ backslash 😀\n\ttabbed"}],
                               tools=[{"type": "function", "function": {"name": "translate", "description": "Übersetzen — \"quoted\"",
                                                                        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}}],
                               add_generation_prompt=True),
    "system-override-and-no-think": dict(messages=[{"role": "system", "content": "/system_override You are terse. /no_think"},
                                                   {"role": "user", "content": "Hi"}], add_generation_prompt=True),
    "invalid-role": dict(messages=[{"role": "user", "content": "hi"}, {"role": "narrator", "content": "Meanwhile..."}],
                         expect_error="raised"),
}

SPECIAL = {
    "qwen3": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    "gpt-oss": {"eos_token": "<|return|>"},
    "qwen3-coder": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    "command-a": {"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>"},
    "gemma4": {"bos_token": "<bos>", "eos_token": "<eos>"},
    "ernie-4.5": {"eos_token": "</s>"},
    "smollm3": {"eos_token": "<|im_end|>", "pad_token": "<|im_end|>"},
    "mistral": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
    "deepseek-r1": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "llama3.2-pythonic": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "glm-4.5": {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
}

FORMAT_KWARGS = {
    "gpt-oss": {"current_date": "2026-12-02", "reasoning_effort": "high"},
    "llama3.2-pythonic": {"date_string": "02 Dec 2026"},
    "mistral": {"today": "2026-12-02"},
    "smollm3": {"today": "02 December 2026"},
}


# Conversations a format's template rejects on purpose (expected error kind).
FORMAT_ERRORS = {
    "qwen3-coder/parallel-tool-calls": "raised",  # string arguments cannot become <parameter> tags
    "gemma4/parallel-tool-calls": "raised",  # nor Gemma's argument notation
    "llama3.2-pythonic/parallel-tool-calls": "raised",  # string arguments cannot become a pythonic call
    "glm-4.5/parallel-tool-calls": "raised",  # nor arg_key/arg_value pairs
}


def format_cases():
    import os
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    out = []
    for fmt in SPECIAL:
        path = f"samples/{fmt}/chat_template.jinja"
        if not os.path.exists(os.path.join(root, path)):
            continue
        for conv_name, conv in CONVERSATIONS.items():
            case = {"name": f"{fmt}/{conv_name}", "template_file": path, "special_tokens": SPECIAL[fmt]}
            case.update({k: v for k, v in conv.items() if k != "kwargs"})
            case["kwargs"] = {**FORMAT_KWARGS.get(fmt, {}), **conv.get("kwargs", {})}
            if case["name"] in FORMAT_ERRORS:
                case["expect_error"] = FORMAT_ERRORS[case["name"]]
            out.append(case)
    return out


USER = [{"role": "user", "content": "  Hello, World!  "}]

DATA = {"s": "héllo \"w\"\n\t\u0001", "i": 3, "f": 1.0, "g": 0.1, "big": 1e20, "small": 1e-7, "neg": -2.5,
        "b": True, "n": None, "l": [1, [2, []], {}], "d": {"z": 1, "a": {"y": [True, False]}}}

FEATURES = {
    "tojson-default": "{{ data | tojson }}",
    "tojson-indent": "{{ data | tojson(indent=2) }}\n{{ data.l | tojson(indent=0) }}\n{{ data.d | tojson(indent='\t') }}",
    "tojson-separators": "{{ data | tojson(separators=(',', ':')) }}|{{ data.d | tojson(indent=1, separators=(', ', ' = ')) }}",
    "tojson-sort-keys": "{{ data | tojson(sort_keys=true) }}",
    "tojson-ensure-ascii": "{{ data.s | tojson(ensure_ascii=true) }} {{ '😀 東京' | tojson(true) }} {{ '😀' | tojson }}",
    "tojson-positional": "{{ data.d | tojson(false, 2) }}",
    "print-python-values": "{{ true }} {{ false }} {{ none }} {{ 3 }} {{ 1.5 }} {{ 2.0 }} {{ data.l }} {{ data.d }} {{ data.s }} {{ [1, 'a', none, true] }} {{ add_generation_prompt }} {{ tools }} {{ documents }} {{ data.big }} {{ data.small }}",
    "string-filter": "{{ data.b | string }}|{{ data.l | string }}|{{ none | string }}|{{ 3 | string }}",
    "loop-variables": "{% for m in messages %}{{ loop.index }}/{{ loop.length }} {{ loop.index0 }} {{ loop.revindex }} {{ loop.revindex0 }}{% if loop.first %} first{% endif %}{% if loop.last %} last{% endif %}\n{% endfor %}",
    "loop-controls": "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i > 5 %}{% break %}{% endif %}{{ i }},{% endfor %}",
    "loop-else-and-filter": "{% for m in messages if m.role == 'tool' %}{{ m.content }}{% else %}no tools{% endfor %}|{% for m in messages|reverse %}{{ m.role }} {% endfor %}",
    "namespace": "{% set ns = namespace(count=0, names=[]) %}{% for m in messages %}{% set ns.count = ns.count + 1 %}{% set ns.names = ns.names + [m.role] %}{% endfor %}{{ ns.count }} {{ ns.names | join(',') }}",
    "string-methods": "{% set s = messages[0].content %}[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ s.strip(' !H') }}][{{ s.split() }}][{{ s.split(',') }}][{{ s.split(' ', 2) }}]"
                      "[{{ s.strip().startswith('Hello') }}][{{ s.endswith('  ') }}][{{ s.upper() }}][{{ s.lower() }}][{{ s.replace('l', 'L') }}][{{ s.replace('l', 'L', 1) }}]"
                      "[{{ 'hello world'.title() }}][{{ 'hELLO'.capitalize() }}][{{ s.find('World') }}][{{ s.count('l') }}][{{ '-'.join(['a', 'b']) }}][{{ 'a\nb\r\nc'.splitlines() }}][{{ s.strip().startswith(('x', 'Hel')) }}]",
    "string-methods-extra": "[{{ 'a.b.c'.rsplit('.', 1) }}][{{ 'x y  z'.rsplit() }}][{{ 'prefix-body'.removeprefix('prefix-') }}][{{ 'body.py'.removesuffix('.py') }}][{{ 'k=v=w'.partition('=') }}][{{ 'abcabc'.index('c') }}][{{ 'abcabc'.rindex('c') }}]",
    "dict-methods": "{% set d = data.d %}{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}|{{ d.keys() | list }}|{{ d.get('z') }}|{{ d.get('missing', 'dflt') }}|{{ d.get('missing') }}|{{ 'z' in d }}|{{ d['a']['y'][0] }}",
    "filters": "{{ messages | length }}|{{ messages | map(attribute='role') | join(', ') }}|{{ messages | selectattr('role', 'equalto', 'user') | list | length }}|{{ (messages | first).role }}|{{ (messages | last).role }}"
               "|{{ ' x ' | trim }}|{{ missing | default('d') }}|{{ '' | default('e', true) }}|{{ 'abc' | upper }}|{{ [3, 1, 2] | sort }}|{{ 'a-b' | replace('-', '+') }}|{{ [1, 2, 2] | unique | list }}|{{ data.d | dictsort }}|{{ 'abc' | reverse }}",
    "tests": "{{ data.s is string }} {{ data.d is mapping }} {{ data.l is sequence }} {{ data.n is none }} {{ data.i is number }} {{ data.b is boolean }} {{ data.f is float }} {{ data.i is integer }} {{ missing is defined }} {{ missing is undefined }} {{ data.b is true }} {{ data.i is odd }} {{ 'ell' in 'hello' }} {{ 2 in [1, 2] }}",
    "undefined-handling": "[{{ missing }}][{{ messages[0].nope }}][{% if messages[0].nope %}yes{% else %}no{% endif %}][{% for x in missing %}{{ x }}{% endfor %}][{{ messages[0].nope is defined }}][{{ data.n is none }}]",
    "slicing-and-indexing": "{{ messages[1:] | map(attribute='role') | list }} {{ messages[-1].role }} {{ messages[::-1][0].role }} {{ 'abcdef'[1:4] }} {{ 'abcdef'[::-1] }} {{ [1,2,3][-2:] }}",
    "arithmetic": "{{ 7 // 2 }} {{ 7 / 2 }} {{ 4 / 2 }} {{ 2 ** 10 }} {{ 10 % 3 }} {{ 1 + 2.5 }} {{ 'a' + 'b' }} {{ 'a' ~ 1 ~ 'b' }} {{ -7 // 2 }} {{ 3 * 'ab' }} {{ [1] + [2] }}",
    "whitespace-control": "Start\n  {% if true %}\n    indented line\n  {% endif %}\n{%- if true -%}\n  stripped\n{%- endif %}\nA {%+ if true %}kept{% endif %}\n  {# a comment #}\nafter comment\n{% for i in [1, 2] %}\n{{ i }}\n{% endfor %}\nEnd\n",
    "trailing-newlines": "line\n\n",
    "special-tokens": "{{ bos_token }}|{{ eos_token }}|{{ pad_token }}|{{ unk_token }}|{{ custom }}",
    "generation-tag": "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}\n{% endfor %}",
    "dict-global-and-set": "{% set d = dict(a=1, b='x') %}{{ d }} {{ d | tojson }}{% set x = 'outer' %}{% for i in [1] %}{% set x = 'inner' %}{% endfor %} {{ x }}",
    "macro-and-call": "{% macro render(m, sep=': ') %}{{ m.role }}{{ sep }}{{ m.content | trim }}{% endmacro %}{% for m in messages %}{{ render(m) }}\n{{ render(m, sep=' -> ') }}\n{% endfor %}",
    "strftime": "{{ strftime_now('%Y') | length }} {{ strftime_now('%d %B %Y') | length > 10 }}",
    "inline-if-and-none": "{{ 'yes' if messages else 'no' }} {{ 'a' if none else 'b' }} {{ (messages[0].content if messages[0].content is string else '') | length }}",
    "content-list": "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}{% for part in m.content %}{% if part.type == 'text' %}{{ part.text }}{% elif part.type == 'image' %}<image>{% endif %}{% endfor %}{% endif %}\n{% endfor %}",
    "probe-items-filter": "{{ data.d | items | list }}",
    "probe-items-list": "{{ data.d.items() | list }}",
    "probe-loop-cycle-previtem": "{% for i in [1, 2, 3] %}{{ loop.cycle('odd', 'even') }}{% if loop.previtem is defined %}<{{ loop.previtem }}{% endif %}{% if loop.nextitem is defined %}>{{ loop.nextitem }}{% endif %} {% endfor %}",
    "probe-set-block": "{% set x %}block {{ 1 }}{% endset %}[{{ x }}]",
    "probe-map-tojson": "{{ data.l | map('tojson') | join('|') }}",
    "probe-int-float": "{{ '3' | int + 1 }} {{ 3.7 | int }} {{ 3 | float }} {{ range(3) | list }} {{ 1e3 }} {{ -0.0 }} {{ 10 / 4 }}",
    "probe-selectattr-defined": "{{ messages | selectattr('content', 'defined') | list | length }} {{ messages | rejectattr('role', 'equalto', 'user') | list | length }}",
    "probe-iter-dict": "{% for k in data.d %}{{ k }},{% endfor %} {{ data.d | length }}",
    "probe-concat-none-bool": "{{ 'x' ~ none }} {{ 'x' ~ true }} {{ 'x' ~ 1.0 }}",
    "probe-and-or": "{{ true and 'x' }} {{ '' or 'y' }} {{ none or 0 }}",
    "probe-escapes": "{{ 'a\\nb' }}|{{ 'tab\\there' }}|{{ '\\u00e9' }}",
    "probe-str-format": "{{ '{} and {}'.format('a', 1) }} {{ '{name}!'.format(name='n') }}",
    "probe-nested-loop": "{% for a in [1, 2] %}{% for b in ['x', 'y'] %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.index }};{% endfor %}",
    "probe-join-attr": "{{ messages | map(attribute='content') | join }} {{ [1, 2] | join }} {{ data.l | first }} {{ data.d | list }}",
    "probe-wordcount-center": "{{ 'a b  c_d é' | wordcount }} {{ data.s | length }} [{{ 'abc' | center(9) }}][{{ 'ab' | center(9) }}][{{ 'abc' | center(8) }}][{{ 'ab' | center(7) }}]",
    "probe-is-in-mapping": "{{ 'z' in data.d.keys() }} {{ 'y' in data.d.a }} {{ data.d.a.y is iterable }}",
}

# Known differences, left out of the cases (minijinja has no such syntax to hook):
#   "{{ '%s=%d' % ('a', 3) }}"  printf-style `%` on strings (minijinja: an invalid operation)
#   "{{ (1, 2) }}"              tuple literals print as lists ([1, 2], Python: (1, 2))

FEATURE_MESSAGES = {
    "loop-variables": [SYSTEM, {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
    "namespace": [SYSTEM, {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
    "filters": [SYSTEM, {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
    "slicing-and-indexing": [SYSTEM, {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
    "loop-else-and-filter": [SYSTEM, {"role": "user", "content": "a"}],
    "generation-tag": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
    "macro-and-call": [{"role": "user", "content": " a "}, {"role": "assistant", "content": "b"}],
    "content-list": [{"role": "user", "content": [{"type": "text", "text": "Look: "}, {"type": "image", "url": "x.png"}]},
                     {"role": "assistant", "content": "A cat."}],
}

ERRORS = [
    dict(name="error/raise-exception", template="{% for m in messages %}\n{% if m.role not in ['user', 'assistant'] %}\n{{ raise_exception('Bad role: ' + m.role) }}\n{% endif %}\n{% endfor %}",
         messages=[{"role": "user", "content": "x"}, {"role": "robot", "content": "y"}], expect_error="raised"),
    dict(name="error/raise-exception-first-line", template="{{ raise_exception('always') }}", messages=USER, expect_error="raised"),
    dict(name="error/syntax-unclosed-expression", template="line one\n{{ messages[0].content \nline three", messages=USER, expect_error="syntax"),
    dict(name="error/syntax-stray-endfor", template="a\nb\n{% endfor %}\n", messages=USER, expect_error="syntax"),
    dict(name="error/syntax-unknown-tag", template="a\n{% frobnicate %}\n", messages=USER, expect_error="syntax"),
    dict(name="error/undefined-attribute", template="ok\n{{ missing.attr }}\n", messages=USER, expect_error="other"),
]


def feature_cases():
    out = []
    for name, template in FEATURES.items():
        case = {"name": f"feature/{name}", "template": template, "messages": FEATURE_MESSAGES.get(name, USER),
                "kwargs": {"data": DATA}, "add_generation_prompt": False}
        if name == "special-tokens":
            case["special_tokens"] = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>"}
            case["kwargs"] = {"custom": "C", "pad_token": "<override>"}
        out.append(case)
    return out


def sample_sections(path):
    """A .sample file's sections, read as crates/tooling/src/sample.rs reads them."""
    import re
    sections, name, opts, lines = {}, None, "", []

    def close():
        if name is not None:
            while lines and not lines[-1].strip():
                lines.pop()
            text = "\n".join(lines)
            m = re.search(r"ends with (\d+ )?newlines?", opts)
            if m:
                text += "\n" * int((m.group(1) or "1").strip())
            sections[name] = text

    with open(path, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            m = re.fullmatch(r"--- (\w+)(?: \((.*)\))? ---", line)
            if m:
                close()
                name, opts, lines = m.group(1), m.group(2) or "", []
            else:
                lines.append(line)
    close()
    return sections


def prefix_tools(prefix):
    """The tool schemas listed one per line between <tools> and </tools> in a prompt."""
    import json
    body = prefix.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0]
    return [json.loads(line) for line in body.split("\n") if line.strip()]


def sample_cases():
    import os
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

    def prefix(rel):
        return sample_sections(os.path.join(root, rel))["prefix"]

    def conversation(rel):
        """A conversation sample's messages (and tools, kwargs): its twin's prefix must render from them."""
        import json
        secs = sample_sections(os.path.join(root, rel))
        return {key: json.loads(secs[key]) for key in ("messages", "tools", "kwargs") if key in secs}

    def tools_of(rel):
        import json
        return json.loads(sample_sections(os.path.join(root, rel))["tools"])

    magistral_system = prefix("samples/mistral/magistral-thinking.sample").split("[SYSTEM_PROMPT]", 1)[1].split("[/SYSTEM_PROMPT]", 1)[0]
    glm_tools = prefix_tools(prefix("samples/glm-4.5/answer-after-observation.sample"))
    specs = [
        ("qwen3/one-tool-call", dict(tools=TOOLS, messages=[
            {"role": "user", "content": "What will the weather be like in Berlin over the next three days?"}])),
        ("qwen3/multi-turn-after-tool-response", dict(tools=TOOLS, messages=[
            {"role": "user", "content": "What will the weather be like in Berlin over the next three days?"},
            {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "Berlin", "days": 3})]},
            {"role": "tool", "content": "{\"city\": \"Berlin\", \"forecast\": [{\"day\": \"Thu\", \"high_c\": 6, \"condition\": \"overcast\"}, {\"day\": \"Fri\", \"high_c\": 4, \"condition\": \"snow showers\"}, {\"day\": \"Sat\", \"high_c\": 3, \"condition\": \"sunny\"}]}"}])),
        ("qwen3/no-think-prefilled", dict(kwargs={"enable_thinking": False}, messages=[
            {"role": "user", "content": "Translate \"good morning\" into Japanese and Korean."}])),
        ("gpt-oss/analysis-then-final", conversation("samples/gpt-oss/conversation-analysis-then-final.sample")),
        ("gpt-oss/after-tool-result-second-call", conversation("samples/gpt-oss/conversation-after-tool-result-second-call.sample")),
        ("gpt-oss/tool-call", dict(tools=tools_of("samples/gpt-oss/tool-call.sample"), kwargs={"current_date": "2026-12-02"}, messages=[
            {"role": "system", "content": "You are a concise travel assistant."},
            {"role": "user", "content": "What is the weather like in San Francisco right now?"}])),
        ("gpt-oss/typed-arguments", dict(tools=tools_of("samples/gpt-oss/typed-arguments.sample"),
                                         kwargs={"current_date": "2026-12-02", "reasoning_effort": "high"}, messages=[
            {"role": "user", "content": "Find me a pet-friendly hotel in Lyon for 2 nights from 18 December, under 120.50 € a night, with Wi-Fi and parking."}])),
        ("qwen3-coder/one-tool-call-typed-params", conversation("samples/qwen3-coder/conversation-one-tool-call-typed-params.sample")),
        ("qwen3-coder/multi-turn-unicode", conversation("samples/qwen3-coder/conversation-multi-turn-unicode.sample")),
        ("qwen3-coder/typed-parameters-object", dict(tools=tools_of("samples/qwen3-coder/typed-parameters-object.sample"), messages=[
            {"role": "user", "content": "File an issue: the slug tests are flaky on Windows. Labels ci and windows, priority 2, about 1.5 hours, not a draft; component tests, owner @mika."}])),
        ("command-a/thinking-and-parallel-actions", conversation("samples/command-a/conversation-thinking-and-parallel-actions.sample")),
        ("command-a/response-after-tool-results", conversation("samples/command-a/conversation-response-after-tool-results.sample")),
        ("gemma4/thinking-then-answer", conversation("samples/gemma4/conversation-thinking-then-answer.sample")),
        ("gemma4/answer-after-tool-response", conversation("samples/gemma4/conversation-answer-after-tool-response.sample")),
        ("gemma4/plain-answer", dict(kwargs={"bos_token": "<bos>"}, messages=[{"role": "user", "content": "Give me three synonyms for \"happy\"."}])),
        ("ernie-4.5/tool-call", dict(tools=tools_of("samples/ernie-4.5/tool-call.sample"), messages=[
            {"role": "user", "content": "下一班从上海到杭州的高铁是几点？"}])),
        ("ernie-4.5/multi-turn-after-tool-output", conversation("samples/ernie-4.5/conversation-multi-turn-after-tool-output.sample")),
        ("ernie-4.5/think-then-response", conversation("samples/ernie-4.5/conversation-think-then-response.sample")),
        ("ernie-4.5/no-thinking-answer", dict(kwargs={"enable_thinking": False}, messages=[
            {"role": "user", "content": "Translate \"Guten Morgen\" into French and Japanese."}])),
        ("smollm3/no-think-plain-answer", dict(kwargs={"enable_thinking": False, "today": "02 December 2026"}, messages=[
            {"role": "user", "content": "How many bones are in the adult human body?"}])),
        ("smollm3/tool-result-then-answer", dict(messages=[
            {"role": "system", "content": "/system_override You are a helpful assistant with tools."},
            {"role": "user", "content": "Do I need an umbrella in Lisbon today?"},
            {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Lisbon", "days": 1})]},
            {"role": "tool", "content": "{\"city\": \"Lisbon\", \"forecast\": [{\"day\": \"today\", \"condition\": \"light rain\", \"precip_mm\": 4.2, \"high_c\": 17}]}"}])),
        ("deepseek-r1/multi-turn", dict(messages=[
            SYSTEM, {"role": "user", "content": "What is the boiling point of water at sea level?"},
            {"role": "assistant", "content": "100 °C (212 °F) at standard atmospheric pressure.", "reasoning_content": "Dropped from history."},
            {"role": "user", "content": "And on the summit of Mont Blanc?"}])),
        ("deepseek-r1/prefilled-think", dict(messages=[{"role": "user", "content": "How many r's are in the word \"strawberry\"?"}])),
        ("mistral/magistral-thinking", dict(messages=[
            {"role": "system", "content": magistral_system}, {"role": "user", "content": "Quelle est la dérivée de x·ln(x) ?"}])),
        ("glm-4.5/think-then-answer", dict(messages=[{"role": "user", "content": "What's the difference between latitude and longitude?"}])),
        ("glm-4.5/no-think-multi-turn", dict(messages=[
            {"role": "user", "content": "Name a famous Czech composer."},
            {"role": "assistant", "content": "Antonín Dvořák, known for the \"New World\" Symphony."},
            {"role": "user", "content": "And another one? /nothink"}])),
        ("glm-4.5/answer-after-observation", dict(tools=glm_tools, messages=[
            {"role": "user", "content": "How's the weather in Hangzhou?"},
            {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "杭州"})]},
            {"role": "tool", "content": "{\"city\": \"杭州\", \"temp_c\": 12, \"condition\": \"小雨\"}"}])),
    ]
    out = []
    for name, spec in specs:
        fmt = name.split("/")[0]
        out.append({"name": f"sample/{name}", "template_file": f"samples/{fmt}/chat_template.jinja",
                    "special_tokens": SPECIAL[fmt], "sample": f"samples/{name}.sample",
                    "add_generation_prompt": spec.get("add_generation_prompt", True), **spec})
    return out


def hostile_cases():
    """What hostile templates push to extremes, at sizes the reference renders: chains a few
    hundred deep (it fails, with a RecursionError, from about 300 to 500 on), and the builtins
    whose result grows with an argument. rtbench's limits must leave these unchanged;
    crates/chat/tests/limits.rs holds the sizes past them."""
    chains = {
        "sum-300": "{{ " + " + ".join(["1"] * 300) + " }}",
        "filters-200": "{{ 'A'" + " | lower" * 200 + " }}",
        "not-300": "{{ " + "not " * 300 + "1 }}",
        "negations-200": "{{ " + "- " * 200 + "1 }}",
        "methods-40": "{{ 'A'" + ".lower().upper()" * 20 + " }}",
        "elif-300": "{% if x == 0 %}0" + "".join(f"{{% elif x == {i} %}}{i}" for i in range(1, 300)) + "{% endif %}",
        "nested-ifs-60": "{% if x %}" * 60 + "deep" + "{% endif %}" * 60,
    }
    out = [{"name": f"hostile/{name}", "template": template, "messages": USER, "kwargs": {"x": 299},
            "add_generation_prompt": False} for name, template in chains.items()]
    sized = {
        "batch-count-past-the-list": "{{ messages | batch(10**12) | list }}",
        "batch-and-slice": "{{ [1, 2, 3, 4, 5] | batch(2, 'x') | list }} {{ [1, 2, 3, 4, 5] | slice(3) | list }} "
                           "{{ [1, 2] | slice(4) | list }} {{ [1, 2, 3] | batch(5) | list }}",
        "widths": "[{{ 'ab' | center(11) }}][{{ 'a\nb\n\nc' | indent(3) }}][{{ 'a\nb' | indent(2, true) }}]"
                  "[{{ '%5d|%-6s|%.3f|%08.2f' | format(42, 'ab', 3.14159, 2.5) }}][{{ '{:>6}|{:^7}|{:.2f}'.format('ab', 'cd', 1.23456) }}]",
        "range-loops": "{% for i in range(3) %}{% for j in range(2, 0, -1) %}{{ i }}{{ j }} {% endfor %}{% endfor %}",
    }
    out += [{"name": f"hostile/{name}", "template": template, "messages": USER, "add_generation_prompt": False}
            for name, template in sized.items()]
    out.append(dict(name="hostile/loop-cycle-without-items", template="{% for m in messages %}\n{{ loop.cycle() }}{% endfor %}",
                    messages=USER, expect_error="other"))
    return out


# Model families whose bundled folders were added with chat templates in their published formats.
SPECIAL.update({
    "kimi-k2": {"bos_token": "[BOS]", "eos_token": "[EOS]"},
    "deepseek-v3.1": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "minimax-m2": {"bos_token": "]~!b[", "eos_token": "[e~["},
    "granite-3.3": {"bos_token": "<|end_of_text|>", "eos_token": "<|end_of_text|>", "pad_token": "<|end_of_text|>"},
})
FORMAT_KWARGS.update({
    "granite-3.3": {"today": "December 02, 2026"},  # else the system prompt has the clock's date
})
FORMAT_ERRORS.update({
    "minimax-m2/parallel-tool-calls": "raised",  # string arguments cannot become <parameter> tags
})


def family_sample_cases():
    """The family folders' samples whose prefix is written out: rendering their conversation
    must give exactly that prefix (conversation-*.sample files render the same messages)."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples"))
    from family_samples import SAMPLES
    out = []
    for fmt, specs in SAMPLES.items():
        for sample, spec in specs.items():
            if sample.startswith("conversation-"):
                continue
            kwargs = {**FORMAT_KWARGS.get(fmt, {}), **spec.get("kwargs", {})}
            out.append({"name": f"sample/{fmt}/{sample}", "template_file": f"samples/{fmt}/chat_template.jinja",
                        "special_tokens": SPECIAL[fmt], "sample": f"samples/{fmt}/{sample}.sample",
                        "add_generation_prompt": True, "messages": spec["messages"], "tools": spec.get("tools"),
                        "kwargs": kwargs})
    return out


def all_cases():
    return format_cases() + sample_cases() + family_sample_cases() + feature_cases() + ERRORS + hostile_cases()
