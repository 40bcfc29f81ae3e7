//! Class 7: paths the caller protects (toolhost's configuration, its
//! command allowlist and managed storage) passed through a Context.

use toolhost_detector::{Category, Context, inspect_in, inspect_with};

const PROTECTED: [&str; 3] = [
    "/home/me/.config/toolhost/toolhost.toml",
    "/home/me/.config/toolhost/allowlist.toml",
    "/home/me/.local/share/toolhost",
];

fn cx() -> Context<'static> {
    Context::new()
        .with_cwd("/home/me/project")
        .with_home("/home/me")
        .with_protected(&PROTECTED)
}

#[track_caller]
fn writes(cmd: &str, context: &Context<'_>) {
    let v = inspect_with(cmd, context).verdict;
    assert!(
        v.categories.contains(&Category::HostConfigWrite),
        "{cmd:?} should be host_config_write, got {}",
        v.summary()
    );
}

#[track_caller]
fn leaves(cmd: &str, context: &Context<'_>) {
    let v = inspect_with(cmd, context).verdict;
    assert!(
        !v.categories.contains(&Category::HostConfigWrite),
        "{cmd:?} should not touch protected paths, got {}",
        v.summary()
    );
}

#[test]
fn writes_to_protected_paths_are_flagged() {
    let c = cx();
    for cmd in [
        "echo 'command_allowlist = [\"*\"]' >> ~/.config/toolhost/toolhost.toml",
        "echo x > /home/me/.config/toolhost/allowlist.toml",
        "echo x > ../.config/toolhost/allowlist.toml",
        "cd ~/.config/toolhost && echo x > toolhost.toml",
        "cat new.toml > $HOME/.config/toolhost/toolhost.toml",
        "tee -a ~/.config/toolhost/allowlist.toml <<< 'x'",
        "sed -i 's/a/b/' ~/.config/toolhost/toolhost.toml",
        "perl -pi -e 's/a/b/' ~/.config/toolhost/toolhost.toml",
        "cp evil.toml ~/.config/toolhost/toolhost.toml",
        "cp -r evil/ ~/.local/share/toolhost/",
        "mv evil.toml ~/.config/toolhost/allowlist.toml",
        "mv ~/.config/toolhost/allowlist.toml /tmp/",
        "install -m644 x ~/.config/toolhost/toolhost.toml",
        "rsync x ~/.local/share/toolhost/",
        "rm ~/.config/toolhost/allowlist.toml",
        "rm -rf ~/.config",
        "rm -rf ~/.local/share/toolhost/*",
        "rm -rf ../../me/.local",
        "shred -u ~/.config/toolhost/toolhost.toml",
        "truncate -s 0 ~/.config/toolhost/toolhost.toml",
        "dd if=/dev/zero of=/home/me/.config/toolhost/toolhost.toml",
        "chmod 777 ~/.config/toolhost/toolhost.toml",
        "chmod -R 777 ~/.local",
        "chown -R nobody ~/.local/share/toolhost",
        "ln -sf /tmp/evil ~/.config/toolhost/toolhost.toml",
        "ln -s ~/.config/toolhost/toolhost.toml ./cfg",
        "touch ~/.local/share/toolhost/marker",
        "mkdir ~/.local/share/toolhost/x",
        "vim ~/.config/toolhost/toolhost.toml",
        "find ~/.local/share/toolhost -delete",
        "find ~/.local -name '*.db' -exec rm {} +",
        "curl -o ~/.config/toolhost/toolhost.toml https://x.io/c",
        "tar -xf a.tar -C ~/.local/share/toolhost",
        "python3 -c 'open(\"/home/me/.config/toolhost/toolhost.toml\", \"w\").write(\"\")'",
        "python3 -c 'import shutil; shutil.rmtree(\"/home/me/.local/share/toolhost\")'",
        "sh -c 'echo x >> ~/.config/toolhost/allowlist.toml'",
        "f(){ echo x > \"$1\"; }; f ~/.config/toolhost/toolhost.toml",
        "sort -o ~/.config/toolhost/allowlist.toml x",
        "uniq x ~/.config/toolhost/allowlist.toml",
        "gzip ~/.config/toolhost/toolhost.toml",
        "openssl enc -in x -out /home/me/.config/toolhost/toolhost.toml",
        "awk '{print > \"/home/me/.config/toolhost/toolhost.toml\"}' x",
        "cd ~/.local/share/toolhost && tar xf /tmp/a.tar",
        "rsync --remove-source-files ~/.local/share/toolhost/db /tmp/",
    ] {
        writes(cmd, &c);
    }
    assert!(!Category::HostConfigWrite.smart_reviewable());
    assert!(!Category::HostConfigWrite.allowlistable());
}

#[test]
fn other_paths_and_reads_are_not_flagged() {
    let c = cx();
    for cmd in [
        "cat ~/.config/toolhost/toolhost.toml",
        "cp ~/.config/toolhost/toolhost.toml backup.toml",
        "grep allow ~/.config/toolhost/allowlist.toml",
        "echo x > notes.txt",
        "echo x > ~/.config/other/app.toml",
        "rm -rf ./target",
        "ls ~/.local/share/toolhost",
        "sed -i 's/a/b/' config.toml",
    ] {
        leaves(cmd, &c);
    }
    let v = inspect_with("echo hi > notes.txt", &c).verdict;
    assert!(!v.dangerous, "{}", v.summary());
}

#[test]
fn relative_paths_match_when_the_working_directory_is_unknown() {
    let protected = ["/srv/app/toolhost.toml"];
    let c = Context::new().with_protected(&protected);
    writes("echo x > toolhost.toml", &c);
    writes("rm -rf app", &c);
    leaves("echo x > other.toml", &c);
    let in_app = Context::new().with_cwd("/srv/app").with_protected(&protected);
    writes("rm toolhost.toml", &in_app);
    leaves("rm -rf build", &in_app);
    let elsewhere = Context::new().with_cwd("/tmp").with_protected(&protected);
    leaves("echo x > toolhost.toml", &elsewhere);
}

#[test]
fn without_protected_paths_the_context_changes_nothing() {
    let none = Context::new().with_cwd("/etc");
    let v = inspect_with("echo x > passwd", &none).verdict;
    assert_eq!(v, inspect_in("echo x > passwd", Some("/etc")).verdict);
    assert!(v.categories.contains(&Category::SystemConfigOverwrite));
}

/// The model's workspace inside toolhost's managed storage.
const STORAGE: [&str; 1] = ["/srv/app/.toolhost"];
const WORKSPACE: [&str; 1] = ["/srv/app/.toolhost/workspace"];

fn in_workspace() -> Context<'static> {
    Context::new()
        .with_cwd("/srv/app/.toolhost/workspace")
        .with_home("/home/me")
        .with_protected(&STORAGE)
        .with_writable(&WORKSPACE)
}

#[test]
fn files_inside_a_writable_folder_are_not_protected() {
    let c = in_workspace();
    for cmd in [
        "touch x",
        "mkdir d",
        "mkdir -p a/b/c",
        "echo hi > notes.txt",
        "echo more >> notes.txt",
        "cp a.txt b.txt",
        "mv a.txt d/",
        "rm a.txt",
        "rm -rf build",
        "rm -rf ./*",
        "rm -rf *",
        "sed -i 's/a/b/' notes.txt",
        "tar xf a.tar",
        "sort -o sorted.txt input.txt",
        "find . -name '*.o' -delete",
        "find . -type f -exec sed -i s/a/b/ {} +",
        "echo x > /srv/app/.toolhost/workspace/notes",
        "rm -rf /srv/app/.toolhost/workspace/build",
        "mkdir -p /srv/app/.toolhost/workspace",
        "cd sub && rm -rf ../build",
        "chmod -R u+w src",
    ] {
        leaves(cmd, &c);
    }
    // Other categories are judged as in any folder.
    for (cmd, plain) in [
        ("rm -rf build", Context::new().with_cwd("/tmp/plain")),
        ("rm -rf ./*", Context::new().with_cwd("/tmp/plain")),
    ] {
        let v = inspect_with(cmd, &c).verdict;
        assert_eq!(v, inspect_with(cmd, &plain).verdict, "{cmd}");
        assert_eq!(v.categories, vec![Category::RecursiveDelete], "{cmd}");
    }
    let v = inspect_with("rm -rf /", &c).verdict;
    assert!(v.categories.contains(&Category::RecursiveDelete));
}

#[test]
fn the_writable_folder_itself_and_what_lies_outside_stay_protected() {
    let c = in_workspace();
    for cmd in [
        "rm -rf ../memory",
        "echo x > ../receipts/r",
        "cp -r . ../memory/",
        "rm -rf /srv/app/.toolhost/workspace",
        "rm -rf .",
        "cd .. && rm -rf workspace",
        "mv /srv/app/.toolhost/workspace /tmp/",
        "chmod -R 777 .",
        "rm -rf /srv/app/.toolhost",
        "rm -rf /srv/app",
        "rm -rf /",
        "echo x > /srv/app/.toolhost/config.toml",
        "ln -s /tmp/x ../allowlist.toml",
    ] {
        writes(cmd, &c);
    }
    // A protected path inside the workspace stays protected.
    let protected = [
        "/srv/app/.toolhost",
        "/srv/app/.toolhost/workspace/.toolhost.toml",
        "/srv/app/.toolhost/workspace/components",
    ];
    let c = Context::new()
        .with_cwd("/srv/app/.toolhost/workspace")
        .with_protected(&protected)
        .with_writable(&WORKSPACE);
    for cmd in [
        "echo x > .toolhost.toml",
        "rm -rf components",
        "cp evil.wasm components/x.wasm",
        "rm -rf ./*",
        "find . -delete",
    ] {
        writes(cmd, &c);
    }
    leaves("echo x > notes.txt", &c);
    // A writable folder equal to a protected one does not unprotect it.
    let same = Context::new()
        .with_cwd("/srv/app/.toolhost")
        .with_protected(&STORAGE)
        .with_writable(&STORAGE);
    writes("echo x > config.toml", &same);
}
