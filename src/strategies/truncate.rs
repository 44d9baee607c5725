//! `truncate`: remove the oldest removable groups until every set target is met.

use super::{choose_drops, drop_reduction, Reduction};
use crate::budget::Targets;
use crate::config::Config;
use crate::error::ReduceError;
use crate::protect::Protection;
use crate::structure::Structure;
use crate::transcript::Transcript;

pub fn truncate(
    t: &Transcript,
    s: &Structure,
    protection: &[Protection],
    config: &Config,
) -> Result<Reduction, ReduceError> {
    let drops = choose_drops(
        t,
        s,
        protection,
        config,
        &Targets::of(config),
        0..s.groups.len(),
    );
    drop_reduction(t, s, &drops, config, "truncate")
}
