//! Error accumulation: every mistake of one item is reported together.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// Collects errors while an item is parsed and checked. It must be finished with
/// [`Ctxt::check`]; dropping it unchecked is a bug in this crate.
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Self { errors: RefCell::new(Some(Vec::new())) }
    }

    /// Records an error spanning `tokens`.
    pub(crate) fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records an error at `span`.
    pub(crate) fn error_at<M: Display>(&self, span: proc_macro2::Span, message: M) {
        self.syn_error(syn::Error::new(span, message));
    }

    /// Records a parse error.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(error);
        }
    }

    /// Whether any error was recorded so far.
    pub(crate) fn has_errors(&self) -> bool {
        self.errors.borrow().as_ref().is_some_and(|errors| !errors.is_empty())
    }

    /// Ends the context: all recorded errors combined, if any.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        let mut iter = errors.into_iter();
        match iter.next() {
            None => Ok(()),
            Some(mut first) => {
                for error in iter {
                    first.combine(error);
                }
                Err(first)
            }
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("tool-macros bug: error context dropped without being checked");
        }
    }
}
