//! Contexts: the clusters named in console.toml's `[[contexts]]` (k9s's
//! habit), each with its controllers, token and safety rules. The console
//! is on one at a time (`:ctx NAME` switches); which one is in
//! [`Contexts::current`]. Plain data: `config` reads them, `update::context`
//! switches, the views name the current one.

/// One cluster the console can be on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub name: String,
    /// Its controllers, tried in order (high availability), never empty.
    pub controllers: Vec<String>,
    /// The token read from `token_file` at load (JWT clusters); None: the local one.
    pub token: Option<String>,
    /// Every write is refused in the console, naming the context.
    pub read_only: bool,
    /// A coloured frame, and every write asks for the context's name typed.
    pub production: bool,
}

impl Context {
    /// The controller list as `--controller` takes it (comma-separated).
    pub fn url(&self) -> String {
        self.controllers.join(",")
    }

    /// Why a write is refused on this context, or None.
    pub fn write_refusal(&self, what: &str) -> Option<String> {
        self.read_only.then(|| format!("context {} is read-only: {what} refused", self.name))
    }
}

/// The contexts of console.toml and the one the console is on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contexts {
    pub all: Vec<Context>,
    /// An index into `all`; None without contexts (the console as before).
    pub current: Option<usize>,
}

impl Contexts {
    pub fn current(&self) -> Option<&Context> {
        self.current.and_then(|i| self.all.get(i))
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.all.iter().position(|c| c.name == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.all.iter().map(|c| c.name.as_str()).collect()
    }

    /// The name a production write must be confirmed with, when the current context is one.
    pub fn production(&self) -> Option<&str> {
        self.current().filter(|c| c.production).map(|c| c.name.as_str())
    }

    /// `:ctx`'s answer: every context, the current one marked.
    pub fn listing(&self) -> String {
        if self.all.is_empty() {
            return "no contexts: add [[contexts]] to console.toml".into();
        }
        let names: Vec<String> = self
            .all
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut s = if Some(i) == self.current { format!("*{}", c.name) } else { c.name.clone() };
                if c.production {
                    s.push_str(" (production)");
                }
                if c.read_only {
                    s.push_str(" (read-only)");
                }
                s
            })
            .collect();
        format!("contexts: {}", names.join(", "))
    }
}
