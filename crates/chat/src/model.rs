//! The chat templates of a model folder, loaded as `PreTrainedTokenizerBase.from_pretrained`
//! loads them in transformers 5.24.0, and chosen as `get_chat_template` chooses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::{ChatTemplate, RenderError, RenderErrorKind};

/// The named special tokens, in `SPECIAL_TOKENS_ATTRIBUTES` order.
const SPECIAL_TOKENS_ATTRIBUTES: [&str; 7] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

/// The template [`ModelTemplates::resolve`] chose: one of the model's, or the argument compiled.
pub enum Picked<'a> {
    /// One of the model folder's templates.
    Model(&'a ChatTemplate),
    /// The `chat_template` argument itself, compiled because it names none of the model's
    /// templates.
    Inline(Box<ChatTemplate>),
}

impl std::ops::Deref for Picked<'_> {
    type Target = ChatTemplate;
    fn deref(&self) -> &ChatTemplate {
        match self {
            Picked::Model(t) => t,
            Picked::Inline(t) => t,
        }
    }
}

enum Templates {
    /// `tokenizer.chat_template` is one string.
    Single(Box<ChatTemplate>),
    /// `tokenizer.chat_template` is a dict of named templates.
    Named(BTreeMap<String, ChatTemplate>),
}

/// The chat templates of a model folder: `tokenizer_config.json`'s `chat_template` (a string, or
/// a list of `{"name", "template"}`), or, taking priority over every config entry as in the
/// reference, `chat_template.jinja` (the "default") and `additional_chat_templates/*.jinja`
/// beside it; with the special tokens the config declares.
pub struct ModelTemplates {
    templates: Templates,
    special_tokens: serde_json::Map<String, serde_json::Value>,
    files: Vec<PathBuf>,
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> RenderError {
    RenderError::other(&path.display().to_string(), e.to_string())
}

fn read(path: &Path, files: &mut Vec<PathBuf>) -> Result<String, RenderError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    files.push(path.to_path_buf());
    Ok(text)
}

/// A token value as the reference keeps it: a string, or an `AddedToken` dict's `content`.
fn token_string(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Object(m) => m
            .get("content")
            .and_then(|c| c.as_str())
            .map(str::to_string),
        _ => None,
    }
}

impl ModelTemplates {
    /// `None`: the folder has no chat template.
    pub fn from_folder(dir: &Path) -> Result<Option<ModelTemplates>, RenderError> {
        let mut files = Vec::new();
        let config_path = dir.join("tokenizer_config.json");
        let config: serde_json::Map<String, serde_json::Value> = if config_path.is_file() {
            let text = read(&config_path, &mut files)?;
            match serde_json::from_str(&text) {
                Ok(serde_json::Value::Object(m)) => m,
                Ok(_) => {
                    return Err(io_error(
                        &config_path,
                        "tokenizer_config.json is not a JSON object",
                    ));
                }
                Err(e) => return Err(io_error(&config_path, e)),
            }
        } else {
            serde_json::Map::new()
        };

        // Template files take priority over the config's entries (all of them).
        let mut from_files: Vec<(String, String, String)> = Vec::new();
        let jinja = dir.join("chat_template.jinja");
        if jinja.is_file() {
            let text = read(&jinja, &mut files)?;
            from_files.push(("default".into(), text, jinja.display().to_string()));
        }
        let extra_dir = dir.join("additional_chat_templates");
        if extra_dir.is_dir() {
            let mut extra: Vec<PathBuf> = std::fs::read_dir(&extra_dir)
                .map_err(|e| io_error(&extra_dir, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jinja"))
                .collect();
            extra.sort();
            for path in extra {
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let text = read(&path, &mut files)?;
                from_files.push((name, text, path.display().to_string()));
            }
        }
        let config_name = config_path.display().to_string();
        let templates = if from_files.len() == 1 && from_files[0].0 == "default" {
            let (_, text, name) = &from_files[0];
            Templates::Single(Box::new(ChatTemplate::new(text, name)?))
        } else if !from_files.is_empty() {
            let mut named = BTreeMap::new();
            for (key, text, name) in &from_files {
                named.insert(key.clone(), ChatTemplate::new(text, name)?);
            }
            Templates::Named(named)
        } else {
            match config.get("chat_template") {
                None | Some(serde_json::Value::Null) => return Ok(None),
                Some(serde_json::Value::String(s)) => Templates::Single(Box::new(
                    ChatTemplate::new(s, &format!("{config_name}#chat_template"))?,
                )),
                Some(serde_json::Value::Array(items)) => {
                    let mut named = BTreeMap::new();
                    for item in items {
                        let name = item.get("name").and_then(|n| n.as_str());
                        let template = item.get("template").and_then(|t| t.as_str());
                        let (Some(name), Some(template)) = (name, template) else {
                            return Err(io_error(
                                &config_path,
                                "chat_template entries must be {\"name\": ..., \"template\": ...}",
                            ));
                        };
                        let label = format!("{config_name}#chat_template[{name}]");
                        named.insert(name.to_string(), ChatTemplate::new(template, &label)?);
                    }
                    Templates::Named(named)
                }
                Some(_) => {
                    return Err(io_error(
                        &config_path,
                        "chat_template must be a string or a list",
                    ));
                }
            }
        };

        Ok(Some(ModelTemplates {
            templates,
            special_tokens: special_tokens(&config),
            files,
        }))
    }

    /// Every chat template of the model (one, or each named one).
    pub fn all(&self) -> Vec<&ChatTemplate> {
        match &self.templates {
            Templates::Single(t) => vec![t],
            Templates::Named(map) => map.values().collect(),
        }
    }

    /// The reference's choice (`get_chat_template`): the template called `name` when given
    /// (a dict of templates), else `tool_use` when tools are given and it exists, else `default`.
    pub fn pick(&self, name: Option<&str>, has_tools: bool) -> Result<&ChatTemplate, RenderError> {
        let file = self
            .files
            .first()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match &self.templates {
            Templates::Single(t) => match name {
                None => Ok(t),
                Some(n) => Err(RenderError::other(
                    &file,
                    format!("this model has a single chat template, not one named {n:?}"),
                )),
            },
            Templates::Named(map) => {
                let chosen = match name {
                    Some(n) => map.get(n),
                    None if has_tools && map.contains_key("tool_use") => map.get("tool_use"),
                    None => map.get("default"),
                };
                chosen.ok_or_else(|| RenderError {
                    message: match name {
                        Some(n) => format!(
                            "no chat template named {n:?}; available template names are {:?}",
                            map.keys().collect::<Vec<_>>()
                        ),
                        None => format!(
                            "This model has multiple chat templates with no default specified! Please either pass a chat template or the name of the template you wish to use to the `chat_template` argument. Available template names are {:?}.",
                            map.keys().collect::<Vec<_>>()
                        ),
                    },
                    file: file.clone(),
                    line: None,
                    column: None,
                    kind: RenderErrorKind::Other,
                })
            }
        }
    }

    /// What `apply_chat_template(chat_template=...)` renders with: like [`pick`](Self::pick),
    /// except that a `chat_template` that names no template of the model is itself the
    /// template source (the reference's behaviour for a string that is not a known name).
    pub fn resolve(
        &self,
        chat_template: Option<&str>,
        has_tools: bool,
    ) -> Result<Picked<'_>, RenderError> {
        if let Some(source) = chat_template {
            let known =
                matches!(&self.templates, Templates::Named(map) if map.contains_key(source));
            if !known {
                return ChatTemplate::new(source, "<chat_template argument>")
                    .map(|t| Picked::Inline(Box::new(t)));
            }
        }
        self.pick(chat_template, has_tools).map(Picked::Model)
    }

    /// The names of the templates (`None` for a single unnamed template).
    pub fn names(&self) -> Option<Vec<&str>> {
        match &self.templates {
            Templates::Single(_) => None,
            Templates::Named(map) => Some(map.keys().map(String::as_str).collect()),
        }
    }

    /// `tokenizer.special_tokens_map`: bos_token, eos_token, ... (then the model-specific
    /// `*_token` entries) as strings. `apply_chat_template` passes these to the template, with
    /// the caller's kwargs overriding them.
    pub fn special_tokens(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.special_tokens
    }

    /// The template kwargs `apply_chat_template` builds: `{**special_tokens_map, **kwargs}`.
    pub fn template_kwargs(
        &self,
        kwargs: &serde_json::Map<String, serde_json::Value>,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut out = self.special_tokens.clone();
        for (k, v) in kwargs {
            out.insert(k.clone(), v.clone());
        }
        out
    }

    /// The files read.
    pub fn files(&self) -> Vec<PathBuf> {
        self.files.clone()
    }
}

/// The special tokens a `tokenizer_config.json` names, as the reference's tokenizer keeps them
/// (`special_tokens_map`): bos, eos, unk, sep, pad, cls and mask, then the model-specific
/// `*_token` entries, then `extra_special_tokens` given as a dict, each as its string.
pub fn special_tokens(
    config: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    for attr in SPECIAL_TOKENS_ATTRIBUTES {
        if let Some(s) = config.get(attr).and_then(token_string) {
            out.insert(attr.to_string(), serde_json::Value::String(s));
        }
    }
    // Model-specific tokens: other `*_token` keys holding a string (or an AddedToken).
    for (key, value) in config {
        if SPECIAL_TOKENS_ATTRIBUTES.contains(&key.as_str()) || !key.ends_with("_token") {
            continue;
        }
        let is_token = value.is_string()
            || value
                .get("__type")
                .and_then(|t| t.as_str())
                .is_some_and(|t| t == "AddedToken");
        if is_token && let Some(s) = token_string(value) {
            out.insert(key.clone(), serde_json::Value::String(s));
        }
    }
    if let Some(serde_json::Value::Object(extra)) = config.get("extra_special_tokens") {
        for (key, value) in extra {
            if let Some(s) = token_string(value) {
                out.insert(key.clone(), serde_json::Value::String(s));
            }
        }
    }
    out
}
