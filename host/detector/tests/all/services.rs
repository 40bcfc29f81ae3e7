//! Service managers: enabling, starting, linking or editing a service is
//! as consequential as stopping one; reading its state is benign.

use toolhost_detector::Category;

use crate::{clean, flagged};

#[test]
fn changing_services_needs_approval() {
    for cmd in [
        "systemctl enable foo",
        "systemctl start foo",
        "systemctl restart foo",
        "systemctl reload nginx",
        "systemctl mask foo",
        "systemctl disable foo",
        "systemctl stop foo",
        "systemctl daemon-reload",
        "systemctl link /tmp/x.service",
        "systemctl edit foo",
        "systemctl --user enable --now app.timer",
        "sudo systemctl -q enable foo",
        "service x start",
        "service nginx restart",
        "service nginx stop",
        "rc-service sshd start",
        "update-rc.d foo defaults",
        "chkconfig foo on",
        "chkconfig --add foo",
        "rc-update add foo default",
        "launchctl load ~/Library/LaunchAgents/x.plist",
        "launchctl bootstrap gui/501 x.plist",
        "launchctl kickstart -k gui/501/x",
        "sv up foo",
        "initctl start foo",
        "start foo",
        "supervisorctl stop all",
        "supervisorctl start foo",
        "supervisorctl reread",
        "brew services start postgresql",
        "pm2 startup",
        "loginctl enable-linger me",
    ] {
        flagged(cmd, Category::ServiceManipulation);
    }
    flagged("systemctl reboot", Category::SystemPower);
}

#[test]
fn reading_service_state_is_benign() {
    for cmd in [
        "systemctl status nginx",
        "systemctl -l status nginx",
        "systemctl list-units",
        "systemctl list-unit-files --state=enabled",
        "systemctl is-active --quiet nginx",
        "systemctl cat foo.service",
        "systemctl",
        "systemctl --user status",
        "journalctl -u x",
        "journalctl -u nginx --since today -n 50",
        "service --status-all",
        "service nginx status",
        "rc-update show",
        "launchctl list",
        "sv status x",
        "initctl list",
        "supervisorctl status",
        "brew services list",
        "loginctl list-sessions",
        "update-rc.d -n foo defaults",
    ] {
        clean(cmd);
    }
}
