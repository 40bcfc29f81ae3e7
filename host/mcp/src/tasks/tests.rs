use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{TaskPayload, TaskStatus};
use serde_json::json;

use super::*;
use crate::store::MemoryStore;

fn tasks(lease: Duration) -> Tasks {
    Tasks::new(
        Arc::new(MemoryStore::new()),
        TaskOptions {
            lease,
            ..TaskOptions::default()
        },
    )
}

#[tokio::test]
async fn a_created_task_is_found_at_once_and_an_unknown_one_is_not() {
    let tasks = tasks(Duration::from_secs(60));
    let created = tasks.create().await.unwrap();
    assert_eq!(created.task.status, TaskStatus::Working);
    assert!(created.task.ttl_ms.is_some() && created.task.poll_interval_ms.is_some());
    let got = tasks.get(&created.task.task_id).await.unwrap();
    assert_eq!(got.payload, TaskPayload::Working);
    for result in [
        tasks.get("nope").await.map(|_| ()),
        tasks.update("nope", Default::default()).await,
        tasks.cancel("nope").await,
    ] {
        let e = result.unwrap_err();
        assert!(matches!(e, TaskError::NotFound(_)), "{e}");
        assert_eq!(e.to_rpc().code, rmcp::model::ErrorCode::INVALID_PARAMS);
    }
}

#[tokio::test]
async fn answers_are_taken_one_key_at_a_time_and_unknown_keys_ignored() {
    let tasks = tasks(Duration::from_secs(60));
    let id = tasks.create().await.unwrap().task.task_id;
    let ask = |key: &'static str| json!({"method": "elicitation/create", "params": {"mode": "form", "message": key, "requestedSchema": {"type": "object", "properties": {}}}});
    tasks
        .change(&id, |r| {
            r.requests.insert("a".into(), ask("a"));
            r.requests.insert("b".into(), ask("b"));
            r.set_status(TaskStatus::InputRequired, None);
            true
        })
        .await
        .unwrap();
    let TaskPayload::InputRequired { input_requests } = tasks.get(&id).await.unwrap().payload else {
        panic!("input_required");
    };
    assert_eq!(input_requests.keys().collect::<Vec<_>>(), ["a", "b"]);
    let answer = json!({"action": "accept", "content": {"ok": true}});
    tasks
        .update(
            &id,
            [
                ("a".to_string(), answer.clone()),
                ("zzz".to_string(), answer.clone()),
            ]
            .into(),
        )
        .await
        .unwrap();
    let TaskPayload::InputRequired { input_requests } = tasks.get(&id).await.unwrap().payload else {
        panic!("still input_required with one left");
    };
    assert_eq!(input_requests.keys().collect::<Vec<_>>(), ["b"]);
    // Answering "a" again changes nothing.
    tasks
        .update(&id, [("a".to_string(), answer.clone())].into())
        .await
        .unwrap();
    tasks
        .update(&id, [("b".to_string(), answer)].into())
        .await
        .unwrap();
    let got = tasks.get(&id).await.unwrap();
    assert_eq!(got.status(), TaskStatus::Working);
    let record = tasks.change(&id, |_| false).await.unwrap().unwrap();
    assert_eq!(record.answers.keys().collect::<Vec<_>>(), ["a", "b"]);
}

#[tokio::test]
async fn a_cancel_is_recorded_once_and_an_ended_task_stays_ended() {
    let tasks = tasks(Duration::from_secs(60));
    let id = tasks.create().await.unwrap().task.task_id;
    tasks.cancel(&id).await.unwrap();
    assert!(tasks.change(&id, |_| false).await.unwrap().unwrap().cancel);
    tasks
        .change(&id, |r| {
            r.result = Some(Default::default());
            r.set_status(TaskStatus::Completed, None);
            true
        })
        .await
        .unwrap();
    tasks.cancel(&id).await.unwrap();
    assert_eq!(tasks.get(&id).await.unwrap().status(), TaskStatus::Completed);
}

#[tokio::test]
async fn a_task_whose_replica_stopped_fails_saying_so() {
    let tasks = tasks(Duration::from_millis(1));
    let id = tasks.create().await.unwrap().task.task_id;
    // Nothing renews the lease: no call runs this task.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let got = tasks.get(&id).await.unwrap();
    let TaskPayload::Failed { error } = got.payload else {
        panic!("failed, not {:?}", got.payload);
    };
    assert_eq!(error["code"], json!(-32603));
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("stopped before the task finished"), "{message}");
    // Terminal: it stays failed.
    assert_eq!(tasks.get(&id).await.unwrap().status(), TaskStatus::Failed);
}
