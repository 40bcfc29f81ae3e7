//! # Content: what a result, a prompt or a model's answer shows
//!
//! MCP carries content as blocks: text, images and audio (bytes with a MIME
//! type), links to resources, and resources embedded whole (text or bytes),
//! each with optional [`Annotations`] (who it is for, how important it is,
//! when it changed). A tool returns blocks in an [`Output`](crate::Output),
//! a prompt's messages hold them ([`PromptMessage`](crate::server::PromptMessage)),
//! and a sampling request and its answer are made of them
//! ([`client::sample`](crate::client::sample)).
//!
//! The SDK passes bytes as bytes: the host base64-encodes them for MCP.
//!
//! ```
//! use toolhost_sdk::{ContentBlock, ResourceContents, ResourceLink, Role};
//!
//! let png: Vec<u8> = vec![0x89, b'P', b'N', b'G'];
//! let blocks = vec![
//!     ContentBlock::text("A red dot:"),
//!     ContentBlock::image(png, "image/png").audience([Role::User]).priority(0.9),
//!     ContentBlock::resource(ResourceContents::text("notes://1", "first note").mime_type("text/plain")),
//!     ContentBlock::resource_link(ResourceLink::new("notes://2", "second note")),
//! ];
//! assert_eq!(blocks[0].as_text(), Some("A red dot:"));
//! ```

/// A party of a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The person.
    User,
    /// The model.
    Assistant,
}

/// Who a block is for, how important it is, when it changed (MCP's
/// annotations). All advisory: clients may use them to choose what to show.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Annotations {
    /// Who it is for; empty when not stated.
    pub audience: Vec<Role>,
    /// How important it is, from 0 (least) to 1 (most).
    pub priority: Option<f64>,
    /// When it last changed, as an ISO 8601 timestamp.
    pub last_modified: Option<String>,
}

impl Annotations {
    /// No annotation stated.
    pub fn new() -> Self {
        Annotations::default()
    }

    /// These annotations, saying the block is for `audience`.
    pub fn audience(mut self, audience: impl IntoIterator<Item = Role>) -> Self {
        self.audience = audience.into_iter().collect();
        self
    }

    /// These annotations with `priority`, from 0 (least) to 1 (most
    /// important).
    pub fn priority(mut self, priority: f64) -> Self {
        self.priority = Some(priority);
        self
    }

    /// These annotations, saying the block last changed at `timestamp`
    /// (ISO 8601, e.g. `2026-01-31T12:00:00Z`).
    pub fn last_modified(mut self, timestamp: impl Into<String>) -> Self {
        self.last_modified = Some(timestamp.into());
        self
    }
}

/// A link to a resource the client may read (MCP's `resource_link`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Its MIME type.
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    pub size: Option<u64>,
}

impl ResourceLink {
    /// A link to the resource at `uri`, called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    /// This link with a title for people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// This link with a description of the resource.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// This link with the resource's MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// This link with the resource's size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

/// A resource's contents: text, or bytes. What a resource read returns, and
/// what an embedded resource block holds.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text.
    Text {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Bytes.
    Blob {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        mime_type: Option<String>,
        /// The bytes.
        blob: Vec<u8>,
    },
}

impl ResourceContents {
    /// The text `text` of the resource at `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
        }
    }

    /// The bytes `blob` of the resource at `uri`.
    pub fn blob(uri: impl Into<String>, blob: impl Into<Vec<u8>>) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: None,
            blob: blob.into(),
        }
    }

    /// These contents with their MIME type.
    pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
        match &mut self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => {
                *mime_type = Some(mime.into());
            }
        }
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }
}

/// What one block of content is, as MCP names the kinds.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text(String),
    /// An image.
    Image {
        /// Its bytes.
        data: Vec<u8>,
        /// Its MIME type, e.g. `image/png`.
        mime_type: String,
    },
    /// A sound.
    Audio {
        /// Its bytes.
        data: Vec<u8>,
        /// Its MIME type, e.g. `audio/wav`.
        mime_type: String,
    },
    /// A link to a resource.
    ResourceLink(ResourceLink),
    /// A resource embedded whole (MCP's `resource` content).
    Resource(ResourceContents),
}

/// One block of content, with its annotations. Made with the constructors
/// below (or from a `String`/`&str`, a text block), annotated with
/// [`audience`](ContentBlock::audience), [`priority`](ContentBlock::priority),
/// [`last_modified`](ContentBlock::last_modified) or
/// [`annotations`](ContentBlock::annotations).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ContentBlock {
    /// What it is.
    pub content: Content,
    /// Who it is for, how important; `None` when not stated.
    pub annotations: Option<Annotations>,
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(text.into()).into()
    }

    /// An image: its bytes and MIME type (`image/png`, `image/jpeg`, ...).
    pub fn image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
        .into()
    }

    /// A sound: its bytes and MIME type (`audio/wav`, `audio/mpeg`, ...).
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
        .into()
    }

    /// A link to a resource.
    pub fn resource_link(link: ResourceLink) -> Self {
        Content::ResourceLink(link).into()
    }

    /// A resource embedded whole.
    pub fn resource(contents: ResourceContents) -> Self {
        Content::Resource(contents).into()
    }

    /// This block with `annotations`, replacing any it had.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// This block, for `audience` (`Role::User`, `Role::Assistant`).
    pub fn audience(self, audience: impl IntoIterator<Item = Role>) -> Self {
        self.annotate(|a| a.audience(audience))
    }

    /// This block with `priority`, from 0 (least) to 1 (most important).
    pub fn priority(self, priority: f64) -> Self {
        self.annotate(|a| a.priority(priority))
    }

    /// This block, last changed at `timestamp` (ISO 8601).
    pub fn last_modified(self, timestamp: impl Into<String>) -> Self {
        self.annotate(|a| a.last_modified(timestamp))
    }

    fn annotate(mut self, f: impl FnOnce(Annotations) -> Annotations) -> Self {
        self.annotations = Some(f(self.annotations.take().unwrap_or_default()));
        self
    }

    /// The text, for a text block.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            Content::Text(text) => Some(text),
            _ => None,
        }
    }
}

impl From<Content> for ContentBlock {
    fn from(content: Content) -> Self {
        ContentBlock {
            content,
            annotations: None,
        }
    }
}

impl From<String> for ContentBlock {
    fn from(text: String) -> Self {
        ContentBlock::text(text)
    }
}

impl From<&str> for ContentBlock {
    fn from(text: &str) -> Self {
        ContentBlock::text(text)
    }
}

/// Conversions between the SDK's types and the world's.
pub(crate) mod wit {
    use super::*;
    use crate::__private::server::toolhost::plugin::types as w;

    impl From<Role> for w::Role {
        fn from(role: Role) -> Self {
            match role {
                Role::User => w::Role::User,
                Role::Assistant => w::Role::Assistant,
            }
        }
    }

    impl From<w::Role> for Role {
        fn from(role: w::Role) -> Self {
            match role {
                w::Role::User => Role::User,
                w::Role::Assistant => Role::Assistant,
            }
        }
    }

    impl From<Annotations> for w::Annotations {
        fn from(a: Annotations) -> Self {
            w::Annotations {
                audience: a.audience.into_iter().map(Into::into).collect(),
                priority: a.priority,
                last_modified: a.last_modified,
            }
        }
    }

    impl From<w::Annotations> for Annotations {
        fn from(a: w::Annotations) -> Self {
            Annotations {
                audience: a.audience.into_iter().map(Into::into).collect(),
                priority: a.priority,
                last_modified: a.last_modified,
            }
        }
    }

    impl From<ResourceContents> for w::ResourceContents {
        fn from(c: ResourceContents) -> Self {
            match c {
                ResourceContents::Text { uri, mime_type, text } => {
                    w::ResourceContents::Text(w::TextContents { uri, mime_type, text })
                }
                ResourceContents::Blob { uri, mime_type, blob } => {
                    w::ResourceContents::Blob(w::BlobContents { uri, mime_type, blob })
                }
            }
        }
    }

    impl From<w::ResourceContents> for ResourceContents {
        fn from(c: w::ResourceContents) -> Self {
            match c {
                w::ResourceContents::Text(t) => ResourceContents::Text {
                    uri: t.uri,
                    mime_type: t.mime_type,
                    text: t.text,
                },
                w::ResourceContents::Blob(b) => ResourceContents::Blob {
                    uri: b.uri,
                    mime_type: b.mime_type,
                    blob: b.blob,
                },
            }
        }
    }

    impl From<ContentBlock> for w::ContentBlock {
        fn from(block: ContentBlock) -> Self {
            let content = match block.content {
                Content::Text(text) => w::Content::Text(text),
                Content::Image { data, mime_type } => w::Content::Image(w::Media { data, mime_type }),
                Content::Audio { data, mime_type } => w::Content::Audio(w::Media { data, mime_type }),
                Content::ResourceLink(l) => w::Content::ResourceLink(w::ResourceLink {
                    uri: l.uri,
                    name: l.name,
                    title: l.title,
                    description: l.description,
                    mime_type: l.mime_type,
                    size: l.size,
                }),
                Content::Resource(c) => w::Content::EmbeddedResource(c.into()),
            };
            w::ContentBlock {
                content,
                annotations: block.annotations.map(Into::into),
            }
        }
    }

    impl From<w::ContentBlock> for ContentBlock {
        fn from(block: w::ContentBlock) -> Self {
            let content = match block.content {
                w::Content::Text(text) => Content::Text(text),
                w::Content::Image(m) => Content::Image {
                    data: m.data,
                    mime_type: m.mime_type,
                },
                w::Content::Audio(m) => Content::Audio {
                    data: m.data,
                    mime_type: m.mime_type,
                },
                w::Content::ResourceLink(l) => Content::ResourceLink(ResourceLink {
                    uri: l.uri,
                    name: l.name,
                    title: l.title,
                    description: l.description,
                    mime_type: l.mime_type,
                    size: l.size,
                }),
                w::Content::EmbeddedResource(c) => Content::Resource(c.into()),
            };
            ContentBlock {
                content,
                annotations: block.annotations.map(Into::into),
            }
        }
    }
}
