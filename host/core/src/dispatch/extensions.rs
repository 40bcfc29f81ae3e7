//! Typed state that layers above the core keep with a dispatcher (see
//! [`Dispatcher::extension`](super::Dispatcher::extension)).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// One value per type, created on first use.
#[derive(Default)]
pub(super) struct Extensions(Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>);

impl Extensions {
    pub(super) fn get_or_default<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(value) = map.get(&TypeId::of::<T>())
            && let Ok(value) = Arc::clone(value).downcast::<T>()
        {
            return value;
        }
        let value = Arc::new(T::default());
        map.insert(
            TypeId::of::<T>(),
            Arc::clone(&value) as Arc<dyn Any + Send + Sync>,
        );
        value
    }
}
