//! Token accounting and prices (issue 3).
