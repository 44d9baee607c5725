//! Provider-reported counts (`recordUsage`): a prompt's `inputTokens` spread over its
//! messages, and which message is the reply that takes `outputTokens`.

/// The largest token count a `ChatHistory` takes from `recordUsage` or a saved state, as
/// the boundary bounds `tokenCounts` and `countTokens`.
pub use crate::contract::MAX_COUNT;

/// Where the model's reply is among some messages, as the boundary found it (the first
/// message the model wrote: an assistant message, a Gemini `model` turn, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Not among them.
    None,
    /// The k-th of them.
    At(usize),
    /// There, but it holds more than the model wrote (tool outputs): `outputTokens` would
    /// under-count it, so it takes no count (and none waits any longer).
    Uncountable,
}

/// Spreads a provider's `inputTokens` for a prompt over its messages in proportion to
/// their estimates, so later decisions use the provider's total (tool definitions and
/// per-request overhead included) while each message keeps its share. In whole tokens, as
/// every other count: a message gets the rounded running share up to it less the one
/// before it, so the shares add up to `inputTokens` (rounded).
pub fn spread(estimates: &[f64], input_tokens: f64) -> Vec<f64> {
    let total: f64 = estimates.iter().sum();
    if total <= 0.0 || !total.is_finite() || !input_tokens.is_finite() || input_tokens < 0.0 {
        return estimates.to_vec();
    }
    let factor = input_tokens / total;
    let (mut running, mut before) = (0.0, 0.0);
    let mut shares = Vec::with_capacity(estimates.len());
    for e in estimates {
        running += e;
        let upto = (running * factor).round();
        shares.push(upto - before);
        before = upto;
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreading_keeps_proportions_and_hits_the_total() {
        let counts = spread(&[10.0, 30.0, 60.0], 150.0);
        assert_eq!(counts, vec![15.0, 45.0, 90.0]);
        assert_eq!(spread(&[0.0, 0.0], 10.0), vec![0.0, 0.0]);
        assert_eq!(spread(&[5.0], f64::NAN), vec![5.0]);
        // Whole tokens that add up to the provider's count.
        assert_eq!(spread(&[1.0, 1.0, 1.0], 10.0), vec![3.0, 4.0, 3.0]);
        let estimates = [12.0, 17.0, 18.0, 17.0, 18.0, 9.0, 31.0];
        let counts = spread(&estimates, 167.0);
        assert!(
            counts.iter().all(|c| c.fract() == 0.0 && *c >= 0.0),
            "{counts:?}"
        );
        assert_eq!(counts.iter().sum::<f64>(), 167.0);
        assert_eq!(spread(&[4.0, 0.0, 4.0], 3.0), vec![2.0, 0.0, 1.0]);
    }

    #[test]
    fn the_count_bound_is_max_safe_integer() {
        assert_eq!(MAX_COUNT, 2f64.powi(53) - 1.0, "Number.MAX_SAFE_INTEGER");
        // Any number of counts at the bound add up to a finite total.
        assert!((MAX_COUNT * u32::MAX as f64).is_finite());
    }
}
