//! # Where a command runs
//!
//! [`Context`] tells [`inspect_with`](crate::inspect_with) what the caller
//! knows about a command's surroundings: its working directory, the home
//! folder `~` stands for, the paths the command must not change, and the
//! folders inside those it may change freely.

/// What the caller knows about where a command runs, for
/// [`inspect_with`](crate::inspect_with).
///
/// All parts are optional; [`Context::default`] knows nothing (the same
/// as [`inspect`](crate::inspect)).
///
/// ```
/// use toolhost_detector::{Category, Context, inspect_with};
///
/// let protected = ["/home/me/.config/toolhost/toolhost.toml"];
/// let cx = Context::new()
///     .with_cwd("/home/me/project")
///     .with_home("/home/me")
///     .with_protected(&protected);
/// let v = inspect_with("echo 'command_allowlist = [\"*\"]' >> ~/.config/toolhost/toolhost.toml", &cx).verdict;
/// assert!(v.categories.contains(&Category::HostConfigWrite));
/// assert!(!inspect_with("echo hi > notes.txt", &cx).verdict.dangerous);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    pub(crate) cwd: Option<&'a str>,
    pub(crate) home: Option<&'a str>,
    pub(crate) protected: &'a [&'a str],
    pub(crate) writable: &'a [&'a str],
}

impl<'a> Context<'a> {
    /// A context that knows nothing.
    pub fn new() -> Context<'a> {
        Context::default()
    }

    /// The command runs in `dir` (an absolute path): relative paths in it
    /// are judged as the paths they name there (`echo x > passwd` in
    /// `/etc` writes `/etc/passwd`).
    pub fn with_cwd(mut self, dir: &'a str) -> Context<'a> {
        self.cwd = Some(dir);
        self
    }

    /// `~` and `$HOME` stand for `dir` (an absolute path), so protected
    /// paths given absolutely match paths the command writes through `~`.
    pub fn with_home(mut self, dir: &'a str) -> Context<'a> {
        self.home = Some(dir);
        self
    }

    /// Files and folders the command must not change: toolhost's own
    /// configuration file, command allowlist and managed storage folder.
    /// Each is an absolute path or starts with `~/`; a folder protects
    /// everything inside it.
    ///
    /// Guarantee: a command that writes, appends to, truncates, deletes,
    /// moves, copies over, links, edits in place or changes the
    /// permissions or ownership of a protected path (or deletes, moves or
    /// recursively changes a folder containing one), as far as the path
    /// can be known from the command text after resolving `~`, `..` and
    /// relative paths against the working directory, gets a
    /// [`Category::HostConfigWrite`](crate::Category::HostConfigWrite)
    /// match, unless the path lies in a writable folder inside the
    /// protected one ([`Context::with_writable`]). Paths computed at run
    /// time or reached through symbolic links made outside the command
    /// cannot be matched.
    pub fn with_protected(mut self, paths: &'a [&'a str]) -> Context<'a> {
        self.protected = paths;
        self
    }

    /// Folders inside protected folders that the command may change
    /// freely: the model's workspace kept inside toolhost's managed
    /// storage. Each is an absolute path or starts with `~/`.
    ///
    /// Guarantee: a path inside a writable folder is not protected by a
    /// protected folder that contains the writable folder. Creating,
    /// editing, moving and deleting files inside the workspace (relative
    /// paths from a working directory inside it, absolute paths,
    /// `rm -rf build`, `rm -rf ./*`, `mkdir -p` of the workspace itself)
    /// is not [`Category::HostConfigWrite`](crate::Category::HostConfigWrite).
    /// Still flagged as before:
    ///
    /// - a protected path that itself lies inside a writable folder (a
    ///   configuration file or component stored in the workspace), and
    ///   deleting, moving or recursively changing a folder holding it;
    /// - deleting, moving or recursively changing a writable folder
    ///   itself or any folder containing it (`rm -rf ../workspace`);
    /// - any path outside the writable folders, including one reached
    ///   with `..` (`rm -rf ../memory`, `echo x > ../receipts/r`).
    ///
    /// Only host-configuration writes change: every other category is
    /// judged as without this call (`rm -rf /` in the workspace is still
    /// `recursive_delete`, and so is `rm -rf build` anywhere). A writable
    /// folder equal to a protected one does not unprotect it.
    ///
    /// ```
    /// use toolhost_detector::{Category, Context, inspect_with};
    ///
    /// let protected = ["/srv/app/.toolhost"];
    /// let writable = ["/srv/app/.toolhost/workspace"];
    /// let cx = Context::new()
    ///     .with_cwd("/srv/app/.toolhost/workspace")
    ///     .with_protected(&protected)
    ///     .with_writable(&writable);
    /// let host = |cmd: &str| inspect_with(cmd, &cx).verdict.categories.contains(&Category::HostConfigWrite);
    /// assert!(!host("echo hi > notes.txt && mkdir d && mv notes.txt d/"));
    /// assert!(!host("rm -rf ./*"));
    /// assert!(host("rm -rf ../memory"));
    /// assert!(host("rm -rf /srv/app/.toolhost/workspace"));
    /// let v = inspect_with("rm -rf build", &cx).verdict;
    /// assert_eq!(v.categories, vec![Category::RecursiveDelete]);
    /// ```
    pub fn with_writable(mut self, dirs: &'a [&'a str]) -> Context<'a> {
        self.writable = dirs;
        self
    }
}
