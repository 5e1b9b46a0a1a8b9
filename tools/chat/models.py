"""Model-folder fixtures for ModelTemplates: each is written to
crates/chat/tests/data/chat_render/models/<name>/ and loaded by the reference with
PreTrainedTokenizerFast.from_pretrained."""

T = "{{ bos_token | default('') }}[@]{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}{{ eos_token | default('') }}{{ image_token | default('') }}{% if tools %} tools={{ tools | length }}{% endif %}"

MODELS = {
    "string-config": {
        "tokenizer_config.json": {
            "bos_token": "<s>", "eos_token": {"__type": "AddedToken", "content": "</s>", "lstrip": False, "normalized": False,
                                              "rstrip": False, "single_word": False, "special": True},
            "pad_token": None, "unk_token": "<unk>", "image_token": "<image>", "chat_template": T.replace("@", "config-string"),
            "tokenizer_class": "PreTrainedTokenizerFast"},
    },
    "list-config": {
        "tokenizer_config.json": {
            "bos_token": "<|begin|>", "eos_token": "<|end|>",
            "chat_template": [{"name": "default", "template": T.replace("@", "default")}, {"name": "tool_use", "template": T.replace("@", "tool_use")},
                              {"name": "rag", "template": T.replace("@", "rag")}],
            "tokenizer_class": "PreTrainedTokenizerFast"},
    },
    "list-no-default": {
        "tokenizer_config.json": {
            "eos_token": "<|end|>",
            "chat_template": [{"name": "alpha", "template": T.replace("@", "alpha")}, {"name": "tool_use", "template": T.replace("@", "tool_use")}],
            "tokenizer_class": "PreTrainedTokenizerFast"},
    },
    "jinja-wins": {
        "tokenizer_config.json": {"eos_token": "<eos>", "chat_template": T.replace("@", "config-string"), "tokenizer_class": "PreTrainedTokenizerFast"},
        "chat_template.jinja": T.replace("@", "jinja-file"),
    },
    "jinja-and-additional": {
        "tokenizer_config.json": {
            "eos_token": "<eos>", "chat_template": [{"name": "default", "template": T.replace("@", "config-default")},
                                                    {"name": "rag", "template": T.replace("@", "config-rag")}],
            "tokenizer_class": "PreTrainedTokenizerFast"},
        "chat_template.jinja": T.replace("@", "jinja-default"),
        "additional_chat_templates/tool_use.jinja": T.replace("@", "jinja-tool_use"),
    },
    "no-template": {
        "tokenizer_config.json": {"eos_token": "<eos>", "tokenizer_class": "PreTrainedTokenizerFast"},
    },
}

# (template name, with tools)
PICKS = [(None, False), (None, True), ("tool_use", False), ("rag", False), ("default", True)]
