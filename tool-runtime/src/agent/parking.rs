//! The agent loop's stand-in for a user who answers later: the [`Interactor`] the loop puts on
//! the context of each call it runs, which takes the questions no bound backend answers.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::runtime::{
    Answered, Completion, ElicitRequest, ElicitResponse, InteractError, InteractFuture, Interactor,
    SampleRequest,
};

/// Hands a call the answers given on earlier resumes, in order, and makes the first question
/// that has none yet wait: [`InteractError::Waiting`] with the question, which the tool returns
/// (`?`), and the runner ends the call waiting on it. A call that goes on asking after that
/// gets the same wait again.
#[derive(Debug, Default)]
pub(crate) struct Parking {
    state: Mutex<Parked>,
}

#[derive(Debug, Default)]
struct Parked {
    answered: Vec<Answered>,
    next: usize,
    asked: Option<ElicitRequest>,
}

impl Parking {
    /// A parking that gives back `answered`, in order.
    pub(crate) fn new(answered: Vec<Answered>) -> Arc<Self> {
        Arc::new(Self { state: Mutex::new(Parked { answered, next: 0, asked: None }) })
    }

    fn lock(&self) -> MutexGuard<'_, Parked> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn answer(&self, request: ElicitRequest) -> Result<ElicitResponse, InteractError> {
        let mut parked = self.lock();
        if let Some(asked) = &parked.asked {
            // The call went on past a question that waits: it waits still.
            return Err(InteractError::Waiting(Box::new(asked.clone())));
        }
        let next = parked.next;
        match parked.answered.get(next) {
            Some(answered) if answered.question == request => {
                let answer = answered.answer.clone();
                parked.next += 1;
                Ok(answer)
            }
            Some(answered) => Err(InteractError::Failed(format!(
                "the call asked another question than the one the user answered (`{}`): it must ask the same questions, in the same order, each time it runs",
                answered.question.message.escape_debug()
            ))),
            None => {
                parked.asked = Some(request.clone());
                Err(InteractError::Waiting(Box::new(request)))
            }
        }
    }
}

impl Interactor for Parking {
    fn elicit(&self, request: ElicitRequest) -> InteractFuture<'_, ElicitResponse> {
        let answer = self.answer(request);
        Box::pin(async move { answer })
    }

    fn sample(&self, _: SampleRequest) -> InteractFuture<'_, Completion> {
        // Never asked: the loop takes questions only, and sampling goes to the bound backend.
        Box::pin(async {
            Err(InteractError::Unavailable("the agent loop answers no sampling request".to_owned()))
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;

    fn question(message: &str) -> ElicitRequest {
        ElicitRequest { message: message.to_owned(), schema: Map::new(), key: None }
    }

    #[tokio::test]
    async fn the_parking_gives_answers_in_order_then_keeps_the_first_unanswered_question() {
        let answered =
            vec![Answered { question: question("first?"), answer: ElicitResponse::Decline }];
        let parking = Parking::new(answered.clone());
        let first = parking.elicit(question("first?")).await;
        let second = parking.elicit(question("second?")).await;
        // A tool that goes on past the wait gets the same wait again, not another question.
        let third = parking.elicit(question("third?")).await;
        let waiting = Err(InteractError::Waiting(Box::new(question("second?"))));
        assert_eq!((first, &second, &third), (Ok(ElicitResponse::Decline), &waiting, &waiting));

        // A call that asks another question than the one answered gets no answer.
        let parking = Parking::new(answered);
        let other = parking.elicit(question("other?")).await;
        assert!(
            matches!(&other, Err(InteractError::Failed(why)) if why.contains("another question")),
            "{other:?}"
        );
    }
}
