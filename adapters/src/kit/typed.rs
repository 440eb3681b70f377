//! Typed JSON-RPC on top of [`super::jsonrpc`]: a dialect declares each method it calls as a type
//! ([`Request`]: the method's name, params and result) and each notification it sends
//! ([`Notification`]), and calls them with typed params for a typed result.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::jsonrpc::{RpcClient, RpcError};

/// A method the client calls.
pub trait Request {
    const METHOD: &'static str;
    type Params: Serialize + DeserializeOwned;
    type Response: Serialize + DeserializeOwned;
}

/// A notification the client sends.
pub trait Notification {
    const METHOD: &'static str;
    /// `()` for a notification without params.
    type Params: Serialize + DeserializeOwned;
}

/// A typed call failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The peer answered, with something that is not the method's result.
    #[error("`{method}` answered with an unexpected result: {error}")]
    Result { method: &'static str, error: serde_json::Error },
}

/// Calls `R` and reads its result.
pub async fn call<R: Request>(
    rpc: &RpcClient,
    params: &R::Params,
    timeout: Duration,
) -> Result<R::Response, CallError> {
    let result = rpc.call(R::METHOD, encode(params)?, timeout).await?;
    serde_json::from_value(result).map_err(|error| CallError::Result { method: R::METHOD, error })
}

/// Calls `R` for its effect: whatever it answers, short of an error, is success.
pub async fn call_discarding<R: Request>(
    rpc: &RpcClient,
    params: &R::Params,
    timeout: Duration,
) -> Result<(), RpcError> {
    rpc.call(R::METHOD, encode(params)?, timeout).await.map(drop)
}

/// Sends `N` (without params when they encode to `null`).
pub async fn notify<N: Notification>(rpc: &RpcClient, params: &N::Params) -> Result<(), RpcError> {
    rpc.notify(N::METHOD, encode(params)?).await
}

/// Answers a request of the peer.
pub async fn respond<T: Serialize>(rpc: &RpcClient, id: Value, result: &T) -> Result<(), RpcError> {
    rpc.respond(id, encode(result)?).await
}

fn encode<T: Serialize>(value: &T) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| RpcError::Closed(format!("encoding failed: {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use serde::Deserialize;
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;
    use crate::kit::jsonrpc::RpcConfig;

    #[derive(Debug, Serialize, Deserialize)]
    struct Echo {
        text: String,
    }

    enum Say {}
    impl Request for Say {
        const METHOD: &'static str = "say";
        type Params = Echo;
        type Response = Echo;
    }

    /// A peer that answers each call with `result`.
    fn peer(result: Value) -> RpcClient {
        let (client_side, peer_side) = tokio::io::duplex(4096);
        let (peer_read, mut peer_write) = tokio::io::split(peer_side);
        tokio::spawn(async move {
            let mut lines = BufReader::new(peer_read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let msg: Value = serde_json::from_str(&line).unwrap();
                let reply = json!({"id": msg["id"], "result": result});
                peer_write.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
            }
        });
        let (read, write) = tokio::io::split(client_side);
        RpcClient::start(read, write, RpcConfig::default(), "test".into()).0
    }

    #[tokio::test]
    async fn results_are_read_as_the_methods_type() {
        let t = Duration::from_secs(5);
        let rpc = peer(json!({"text": "hi", "extra": 1}));
        let got = call::<Say>(&rpc, &Echo { text: "x".into() }, t).await.unwrap();
        assert_eq!(got.text, "hi");
        let rpc = peer(json!({"nope": true}));
        let err = call::<Say>(&rpc, &Echo { text: "x".into() }, t).await.unwrap_err();
        assert!(err.to_string().starts_with("`say` answered with an unexpected result: missing field `text`"), "{err}");
        call_discarding::<Say>(&rpc, &Echo { text: "x".into() }, t).await.unwrap();
    }
}
