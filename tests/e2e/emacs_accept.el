;;; Driven by tests/e2e/test_emacs.py: the shipped deepacp.el, a real Emacs, a real server.
;; -*- lexical-binding: t; -*-

(defvar deepacp-test--asked nil "The confirmation Emacs showed before applying the edit.")

(defun deepacp-test--finish (outcome)
  (with-temp-file (getenv "DEEPACP_TEST_RESULT") (insert outcome))
  (kill-emacs (if (string-prefix-p "OK" outcome) 0 1)))

(defun deepacp-test--wait (what predicate)
  (let ((deadline (+ (float-time) 60)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline) (error "timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(condition-case err
    (progn
      (load (getenv "DEEPACP_EMACS_SNIPPET"))
      ;; The user answers "yes" when Emacs shows the server's edit for confirmation.
      (advice-add 'y-or-n-p :override (lambda (prompt &rest _) (setq deepacp-test--asked prompt) t))
      (find-file (getenv "DEEPACP_TEST_FILE"))
      (python-mode)
      (apply #'eglot (eglot--guess-contact))
      (deepacp-test--wait "the language server" #'eglot-current-server)
      ;; An unsaved change: the proposal must be made against it.
      (goto-char (point-min))
      (search-forward "1.0.0")
      (insert "-unsaved")
      (deepacp-edit "bump the version")
      (deepacp-test--wait "the proposal" (lambda () deepacp-last-result))
      (unless (plist-get deepacp-last-result :proposal)
        (error "no proposal: %S" deepacp-last-result))
      (deepacp-accept)
      (deepacp-test--wait "the edit" (lambda () (save-excursion
                                                  (goto-char (point-min))
                                                  (search-forward "1.1.0" nil t))))
      (save-buffer)
      (deepacp-test--finish (format "OK %s\n%s" (plist-get deepacp-last-result :proposal)
                                    deepacp-test--asked)))
  (error (deepacp-test--finish (format "FAIL: %s\n%s" (error-message-string err)
                                       (with-current-buffer "*Messages*" (buffer-string))))))
