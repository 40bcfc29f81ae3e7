//! Class 1: names a script defines and uses on a later line or command:
//! aliases, functions (judged at each call, with its arguments) and
//! variables or arrays holding a command.

use toolhost_detector::Category;

use crate::{clean, flagged};

#[test]
fn aliases_are_expanded_where_used() {
    for cmd in [
        "alias x='rm -rf'; x /tmp/d",
        "alias x=rm; x -rf /tmp/d",
        "alias x='sudo rm'\nx -r /srv",
        "alias del='command rm -r'; del build",
        "alias a=b; alias b='rm -rf'; a d",
        "shopt -s expand_aliases; alias c=rm\nc -fr /data",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    flagged("alias k=kill; k -9 -1", Category::ProcessKill);
    flagged("alias x=\"$CMD\"; x", Category::DynamicCommand);
    for cmd in [
        "alias ll='ls -la'; ll",
        "alias ls='ls --color=auto'; ls src",
        "alias g=git; g status",
        "alias x=rm; unalias x; x -rf d",
    ] {
        clean(cmd);
    }
}

#[test]
fn functions_are_judged_when_called_with_their_arguments() {
    for cmd in [
        "f(){ rm -rf \"$1\"; }; f d",
        "f(){ rm \"$@\"; }; f -rf /",
        "f() { command rm \"$@\"; }\nf -r build",
        "function f { rm $*; }; f -rf /srv",
        "function f() { \"$@\"; }; f rm -rf d",
        "wrap(){ sudo \"$@\"; }; wrap rm -rf /opt",
        "f(){ g \"$@\"; }; g(){ rm \"$1\" \"$2\"; }; f -rf /",
        "f(){ local t=\"$1\"; rm -r \"$t\"; }; f /srv",
        "f(){ $1 -rf \"$2\"; }; f rm d",
        "f(){ rm -r \"$1\"; }; export -f f; bash -c 'f /srv'",
        "export c=rm; bash -c '$c -rf d'",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    flagged("k(){ kill \"$@\"; }; k -9 1234", Category::ProcessKill);
    flagged("f(){ git \"$@\"; }; f push --force", Category::GitDestructive);
    for cmd in [
        "f(){ echo hi; }; f",
        "greet(){ echo \"hello $1\"; }; greet world",
        "build(){ cargo build --release \"$@\"; }; build --locked",
        "f(){ ls \"$@\"; }; f -la src",
        "f(){ rm \"$@\"; }; f build.log",
        "f(){ rm \"$@\"; }; unset -f f; f -rf d",
    ] {
        clean(cmd);
    }
}

#[test]
fn variables_and_arrays_holding_commands() {
    for cmd in [
        "c=\"rm -rf\"; $c d",
        "c=rm; $c -rf d",
        "a=(rm -rf d); \"${a[@]}\"",
        "a=(rm -rf); \"${a[@]}\" /srv",
        "a=(sudo rm); a+=(-r); ${a[*]} /opt",
        "export c='rm -r'; $c /srv",
        "c=$(echo rm -rf); $c d",
        "sh -c 'rm -rf \"$1\"' _ /",
        "sh -c '\"$@\"' _ rm -rf d",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    // An element is picked by its index, and a known value names the
    // program itself: no run-time computation is involved.
    flagged("a=(ls rm); \"${a[1]}\" -rf d", Category::RecursiveDelete);
    clean("a=(rm ls); \"${a[1]}\" -la d");
    // A command substitution's output stays computed, even through a
    // variable.
    flagged("c=$(echo ls); $c", Category::DynamicCommand);
    clean("a=(one two); echo \"${a[@]}\"");
    clean("files=(a.txt b.txt); wc -l \"${files[@]}\"");
}

/// A definition may not run (a branch not taken), so a function or alias
/// named like a program never hides the program: both are judged.
/// Assignments in branches make a changed variable unknown.
#[test]
fn definitions_in_branches_do_not_hide_programs() {
    for cmd in [
        "if false; then rm(){ :; }; fi; rm -rf /",
        "false && alias rm=:; rm -rf /",
        "rm(){ :; }; rm -rf /",
        "case x in y) alias rm=echo;; esac; rm -rf /srv",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    for cmd in [
        "c=rm; if false; then c=ls; fi; $c -rf /",
        "c=rm; [ -n \"$x\" ] && c=ls; $c -rf /",
        "a=(rm -rf /); [ -n \"$x\" ] && a=(ls); \"${a[@]}\"",
    ] {
        let v = toolhost_detector::detect(cmd);
        assert!(v.dangerous, "{cmd}: {v:?}");
    }
    clean("if [ -z \"$d\" ]; then d=build; fi; ls \"$d\"");
}
