//! Kubernetes' slow start (`slowStartBatch`): writes in batches of 1, 2, 4, … run concurrently within
//! a batch; after a batch with a failure nothing more is attempted, so a write that fails for every
//! object (a quota, a webhook refusing the template) fails once instead of once per object.

use std::future::Future;

use futures::future::join_all;

/// Runs `write` on `items` in slow-start batches; the results of the writes attempted, in order.
pub async fn slow_start<'a, T, E, F, Fut>(items: &'a [T], write: F) -> Vec<(&'a T, Result<(), E>)>
where
    F: Fn(&'a T) -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    let mut out = Vec::with_capacity(items.len());
    let mut batch = 1;
    let mut rest = items;
    while !rest.is_empty() {
        let (now, later) = rest.split_at(batch.min(rest.len()));
        let results = join_all(now.iter().map(&write)).await;
        let failed = results.iter().any(Result::is_err);
        out.extend(now.iter().zip(results));
        if failed {
            break;
        }
        rest = later;
        batch *= 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn batches_double_and_stop_after_a_failed_batch() {
        let items: Vec<usize> = (0..10).collect();
        let calls = AtomicUsize::new(0);
        // All succeed: every item written, in batches 1, 2, 4, 3.
        let all = slow_start(&items, |_| async {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<(), ()>(())
        })
        .await;
        assert_eq!(all.len(), 10);
        // Item 4 fails: the batch [3, 4, 5, 6] runs to its end, then nothing more.
        let some = slow_start(&items, |i| {
            let i = *i;
            async move { if i == 4 { Err("refused") } else { Ok(()) } }
        })
        .await;
        let attempted: Vec<usize> = some.iter().map(|(i, _)| **i).collect();
        assert_eq!(attempted, [0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(some.iter().filter(|(_, r)| r.is_err()).count(), 1);
    }
}
