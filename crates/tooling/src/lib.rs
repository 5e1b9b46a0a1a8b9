//! Debugging tools on top of the response-template engine, shared by rtbench's command line and
//! its workbench. Nothing here draws on a terminal.

pub mod atomic;
pub mod chunking;
pub mod corpus;
pub mod defusing;
pub mod diff;
pub mod explain;
pub mod export;
pub mod files;
pub mod findings;
pub mod injection;
pub mod inputs;
pub mod lint;
pub mod model;
pub mod paint;
pub mod partial_json;
pub mod progress;
pub mod replay;
pub mod sample;
pub mod testing;
pub mod versions;
