//! `truncate`: remove the oldest removable groups until every set target is met.

use super::{drop_groups, Reduction};
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
    drop_groups(t, s, protection, config, "truncate", 0..s.groups.len())
}
