//! The tool contract of a server, and how it drifts.
//!
//! A *contract snapshot* ([`Snapshot`], `mcp-contract.snapshot.json`) pins the tools a server
//! publishes — names, descriptions, input schemas, annotations — so that a pull request which
//! breaks a caller fails CI. [`diff_contracts`] compares the approved snapshot with the live
//! listing and classifies every change under a stable rule id in one of four [`Tier`]s
//! (breaking, dangerous, minor, info).
//!
//! Pure: nothing here touches the network or a process. [`Snapshot::read`] reads the one file
//! it is given; everything else works on values.
//!
//! * [`snapshot`] — the file format (read, write byte-compatibly, find each tool's line);
//! * [`canonical`] — the spelling-independent form of a schema the walk compares;
//! * [`drift`] — the rule ids, tiers and the per-node schema walk;
//! * [`collation`] — the order tools are written in.

pub(crate) mod canonical;
pub(crate) mod collation;
pub(crate) mod drift;
pub(crate) mod snapshot;

pub(crate) use drift::{Change, FailOn, Tier, counts, diff_contracts, should_fail};
pub(crate) use snapshot::{DEFAULT_FILE, MARKER, Snapshot, tool_name_lines};
