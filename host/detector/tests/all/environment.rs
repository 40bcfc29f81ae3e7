//! Class 4: environment variables that change which program runs or make
//! programs run other code.

use toolhost_detector::Category;

use crate::{clean, flagged, opaque};

#[test]
fn search_paths_outside_installed_locations_are_opaque() {
    for cmd in [
        "PATH=./bin:$PATH ls",
        "PATH=.:$PATH make",
        "PATH=/tmp/x ls",
        "PATH=:$PATH ls",
        "PATH=$PATH: ls",
        "export PATH=\"$HOME/.cargo/bin:$PATH\"; cargo build",
        "export PATH=./node_modules/.bin:$PATH\nnpm test",
        "PATH=$PATH:./tools; tool",
        "env PATH=.:$PATH make",
        "sudo PATH=/tmp:$PATH make install",
        "PATH=$DIR:$PATH ls",
        "declare -x PATH=/tmp/bin",
        "LD_LIBRARY_PATH=./lib ls",
        "DYLD_LIBRARY_PATH=/tmp ls",
        "PATH+=:/tmp/x; ls",
        "hash -p /tmp/x ls; ls",
        "enable -f ./x.so foo",
    ] {
        opaque(cmd);
    }
    for cmd in [
        "export PATH=$PATH:/usr/local/go/bin; go build",
        "PATH=/usr/local/bin:/usr/bin:/bin make",
        "export PATH=/opt/homebrew/bin:$PATH",
        "LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu ls",
        "env | grep PATH",
        "PATH+=:/usr/local/bin; ls",
        "echo $PATH",
    ] {
        clean(cmd);
    }
}

#[test]
fn preloads_and_startup_files_are_opaque() {
    for cmd in [
        "LD_PRELOAD=./x.so ls",
        "env LD_PRELOAD=/tmp/x.so ls",
        "export LD_PRELOAD=$PWD/hook.so; ls",
        "DYLD_INSERT_LIBRARIES=./x.dylib ls",
        "BASH_ENV=./x.sh bash -c ls",
        "ENV=/tmp/e sh -c ls",
        "GIT_EXEC_PATH=./g git status",
        "GIT_TEMPLATE_DIR=./t git init",
        "NODE_OPTIONS='--require ./hook.js' node -e 1",
        "NODE_OPTIONS=-r./x.js npm test",
        "PERL5OPT=-Mx perl -e 1",
        "RUBYOPT=-r./x ruby -e 1",
        "JAVA_TOOL_OPTIONS=-javaagent:./a.jar java -version",
        "SHELL=/tmp/sh script",
        "TAR_OPTIONS=--to-command=./x tar xf a.tar",
    ] {
        opaque(cmd);
    }
    flagged("LD_PRELOAD=./x.so ls", Category::CodeExecution);
    flagged(
        "echo 'rm -rf d' > e; BASH_ENV=e bash -c ls",
        Category::RecursiveDelete,
    );
    for cmd in [
        "NODE_OPTIONS=--max-old-space-size=4096 npm run build",
        "SHELL=/bin/zsh script",
        "LD_PRELOAD= ls",
        "BASH_ENV=/dev/null bash -c ls",
        "LANG=C ls",
        "CI=true npm test",
        "RUST_LOG=debug cargo run",
        "PYTHONPATH=src python3 -m pytest",
    ] {
        clean(cmd);
    }
}

#[test]
fn variables_holding_commands_are_analysed() {
    for cmd in [
        "EDITOR='rm -rf d' git commit",
        "VISUAL='rm -rf d' crontab -e",
        "PAGER='sh -c \"rm -rf d\"' man ls",
        "GIT_SSH_COMMAND='rm -rf d' git pull",
        "GIT_SSH='./x; rm -rf d' git fetch",
        "LESSOPEN='|rm -rf d %s' less f",
        "PROMPT_COMMAND='rm -rf d' bash -i",
        "export PROMPT_COMMAND='rm -rf d'",
        "PS4='$(rm -rf d)' bash -x s",
        "env 'BASH_FUNC_ls%%=() { rm -rf d; }' bash -c ls",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    flagged("PAGER=\"$P\" git log", Category::DynamicCommand);
    for cmd in [
        "EDITOR=vim git commit",
        "PAGER=cat git log",
        "GIT_PAGER='less -R' git log",
        "LESSOPEN='| lesspipe %s' less f",
        "PS1='\\u@\\h$ ' bash",
    ] {
        clean(cmd);
    }
}
