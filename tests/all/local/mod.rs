//! Local models behind an Anthropic-compatible server (Ollama's layer,
//! llama.cpp's server): the mock answers as Ollama's layer is documented
//! to ([`dialect`]), runs sized to a small window never send a request
//! past it ([`window`]), a token budget holds ([`tokens`]), and small
//! models' sloppy tool calls are survived ([`sloppy`]).

mod dialect;
mod sloppy;
mod tokens;
mod window;
