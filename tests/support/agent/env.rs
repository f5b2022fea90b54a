//! [`AgentEnv`]: a [`TestEnv`] with a mock server answered by a
//! [`MockAgent`], and the readers of what each pass sent.

use super::*;

/// A [`TestEnv`] whose commands talk to a live mock server answering as a
/// [`MockAgent`]. Derefs to the `TestEnv`.
pub struct AgentEnv {
    env: TestEnv,
    pub server: MockServer,
}

impl TestEnv {
    /// Run this env's commands against a new mock server that answers as
    /// the default [`MockAgent`] for this target.
    pub fn with_mock(self) -> AgentEnv {
        self.with_agent(|agent| agent)
    }

    /// Like [`TestEnv::with_mock`], with the agent adjusted by `build`.
    pub fn with_agent(self, build: impl FnOnce(MockAgent) -> MockAgent) -> AgentEnv {
        let server = MockServer::start();
        let env = self.with_base_url(server.url());
        let agent = build(MockAgent::new(env.target()));
        server.respond_with(move |request| agent.reply(&request.body));
        AgentEnv { env, server }
    }
}

impl AgentEnv {
    /// Replace the agent (for a later run of the same env).
    pub fn set_agent(&self, build: impl FnOnce(MockAgent) -> MockAgent) {
        let agent = build(MockAgent::new(self.env.target()));
        self.server
            .respond_with(move |request| agent.reply(&request.body));
    }

    /// Every request so far, with the pass it belonged to.
    pub fn passes(&self) -> Vec<(Pass, RecordedRequest)> {
        let target = std::fs::canonicalize(self.env.target()).unwrap();
        self.server
            .requests()
            .into_iter()
            .map(|request| (Pass::of(&request.body, &target), request))
            .collect()
    }

    /// The requests of one pass, in order.
    pub fn requests_of(&self, pass: &Pass) -> Vec<RecordedRequest> {
        self.passes()
            .into_iter()
            .filter(|(p, _)| p == pass)
            .map(|(_, request)| request)
            .collect()
    }

    /// [`TestEnv::run_ok`], insisting that the run sent the mock no request:
    /// everything came from the cache, and nothing (`what`) was paid for
    /// again.
    #[track_caller]
    pub fn run_ok_from_cache(&self, extra: &[&str], what: &str) -> std::process::Output {
        let requests = self.server.request_count();
        let output = self.run_ok(extra);
        assert_eq!(
            self.server.request_count(),
            requests,
            "{what} was paid for again"
        );
        output
    }

    /// Spawn `luminos [extra] TARGET` (stdout and stderr piped) and press
    /// Ctrl-C once the mock has seen `requests` requests in all, failing if
    /// that takes longer than `within`; returns the interrupted child.
    pub fn interrupt_after(
        &self,
        extra: &[&str],
        requests: usize,
        within: std::time::Duration,
    ) -> std::process::Child {
        use std::process::Stdio;
        let child = self
            .std_cmd()
            .env("ANTHROPIC_API_KEY", "test-key")
            .args(extra)
            .arg(self.target())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while self.server.request_count() < requests {
            assert!(started.elapsed() < within, "the run never got going");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // SAFETY: kill(2) on our own child's pid, which is not reaped yet.
        let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(rc, 0);
        child
    }
}

impl std::ops::Deref for AgentEnv {
    type Target = TestEnv;

    fn deref(&self) -> &TestEnv {
        &self.env
    }
}
