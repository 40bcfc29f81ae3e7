//! Service clients (datastores, code forges, clouds) whose subcommands
//! delete what they name; their reading subcommands stay benign.

use toolhost_detector::Category;

use crate::{clean, flagged};

#[test]
fn datastore_tools_that_drop_or_delete() {
    for cmd in [
        "dropdb prod",
        "dropdb -h db.internal -U admin prod",
        "dropuser bob",
        "mysqladmin drop db",
        "mysqladmin -u root -f drop db",
        "redis-cli FLUSHALL",
        "redis-cli -n 2 flushdb",
        "redis-cli DEL k",
        "redis-cli -c UNLINK k",
        "echo FLUSHDB | redis-cli",
        "redis-cli --scan --pattern 'sess:*' | xargs redis-cli del",
        "valkey-cli SCRIPT FLUSH",
        "mongosh --eval 'db.dropDatabase()'",
        "influx bucket delete -n b",
        "influx delete --bucket b --start 1970-01-01T00:00:00Z --stop now",
        "etcdctl --endpoints x:2379 del k",
        "consul kv delete -recurse app/",
        "vault kv destroy -versions=1 secret/x",
        "vault secrets disable kv",
        "psql -c \"DROP TABLE x\"",
    ] {
        flagged(cmd, Category::SqlDestructive);
    }
}

#[test]
fn forge_and_cloud_clients_that_delete() {
    for cmd in [
        "gh repo delete o/r --yes",
        "gh release delete v1 -R o/r",
        "gh release delete-asset v1 a.zip",
        "gh api -X DELETE repos/o/r",
        "gh api --method=delete repos/o/r/git/refs/heads/x",
        "glab repo delete o/r",
        "glab api -XDELETE projects/1",
        "tea repo delete",
        "hub delete o/r",
        "az repos delete --id x",
        "aws s3 rb s3://b --force",
        "aws s3 rm s3://b --recursive",
        "gsutil rm -r gs://b",
        "gcloud compute instances delete x",
        "gcloud --project p sql instances delete db",
        "heroku apps:destroy -a x",
        "firebase firestore:delete -r /users",
        "vercel rm x",
        "fly apps destroy x",
        "wrangler r2 bucket delete b",
        "openstack server delete vm1",
    ] {
        flagged(cmd, Category::InfrastructureDestroy);
    }
}

#[test]
fn reading_clients_stay_benign() {
    for cmd in [
        "gh repo view",
        "gh pr list",
        "gh pr view 12 --comments",
        "gh issue list --search delete",
        "gh api repos/o/r",
        "gh release list",
        "glab mr list",
        "redis-cli GET k",
        "redis-cli --scan --pattern 'x*'",
        "redis-cli INFO keyspace",
        "influx bucket list",
        "etcdctl get k",
        "gcloud compute instances list --filter delete",
        "az vm list -o table",
        "heroku logs --tail -a x",
        "dropdb --help",
        "mysqladmin status",
    ] {
        clean(cmd);
    }
}
