;;; Driven by tests/e2e/test_emacs.py and test_editors.py: the shipped deepacp.el, a real
;;; Emacs, a real server.  -*- lexical-binding: t; -*-
;; DEEPACP_TEST_SCENARIO names one of the scenarios below (default: unsaved). Each drives
;; Emacs as a user would and writes what the user saw to DEEPACP_TEST_RESULT: "OK" and a
;; JSON report, or "FAIL: why".

(require 'json)

(defvar deepacp-test--asked nil "The confirmations Emacs showed, latest first.")
(defvar deepacp-test--answer t "What the user answers to them.")
(defvar deepacp-test--report nil "An alist, written as JSON.")

(defun deepacp-test--finish (outcome)
  (with-temp-file (getenv "DEEPACP_TEST_RESULT") (insert outcome))
  (kill-emacs (if (string-prefix-p "OK" outcome) 0 1)))

(defun deepacp-test--wait (what predicate)
  (let ((deadline (+ (float-time) 60)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline) (error "timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun deepacp-test--messages ()
  (with-current-buffer "*Messages*" (buffer-substring-no-properties (point-min) (point-max))))

(defun deepacp-test--said (&rest texts)
  "The first line of *Messages* holding one of TEXTS, or nil."
  (cl-some (lambda (line) (and (cl-some (lambda (text) (string-search text line)) texts) line))
           (split-string (deepacp-test--messages) "\n")))

(defun deepacp-test--note (key value)
  (push (cons key value) deepacp-test--report))

(defun deepacp-test--text (&optional buffer)
  (with-current-buffer (or buffer (current-buffer))
    (buffer-substring-no-properties (point-min) (point-max))))

(defun deepacp-test--start (file)
  (find-file file)
  (python-mode)
  (apply #'eglot (eglot--guess-contact))
  (deepacp-test--wait "the language server" #'eglot-current-server))

(defun deepacp-test--edit (instruction)
  (setq deepacp-last-result nil)
  (deepacp-edit instruction)
  (deepacp-test--wait "the proposal" (lambda () deepacp-last-result))
  (unless (plist-get deepacp-last-result :proposal)
    (error "no proposal: %S" deepacp-last-result)))

(defun deepacp-test--accept ()
  "M-x deepacp-accept, and wait for the server to say how it went."
  (with-current-buffer "*Messages*" (let ((inhibit-read-only t)) (erase-buffer)))
  (deepacp-accept)
  (deepacp-test--wait "the accept's outcome"
                      (lambda () (deepacp-test--said "not saved yet" "did not apply"
                                                     "nothing accepted" "deepacp: Internal"))))

(defun deepacp-test--code-action (line title)
  "Pick TITLE from `eglot-code-actions' on LINE, as the user would."
  (goto-char (point-min))
  (forward-line (1- line))
  (cl-letf (((symbol-function 'completing-read)
             (lambda (_prompt collection &rest _)
               (deepacp-test--note 'offered (mapcar #'car collection))
               title)))
    (let ((last-nonmenu-event ?\r))
      (call-interactively #'eglot-code-actions))))

(defun deepacp-test-unsaved ()
  "The proposal is made against the unsaved buffer; Emacs asks before applying it."
  (deepacp-test--start (getenv "DEEPACP_TEST_FILE"))
  (goto-char (point-min))
  (search-forward "1.0.0")
  (insert "-unsaved")
  (deepacp-test--edit "bump the version")
  (deepacp-accept)
  (deepacp-test--wait "the edit" (lambda () (save-excursion
                                              (goto-char (point-min))
                                              (search-forward "1.1.0" nil t))))
  (save-buffer)
  (format "OK %s\n%s" (plist-get deepacp-last-result :proposal) (car deepacp-test--asked)))

(defun deepacp-test-review ()
  "A hunk accepted from the code-action menu, a declined deepacp-accept, then a yes."
  (let ((root (getenv "DEEPACP_TEST_ROOT")))
    (deepacp-test--start (expand-file-name "calc.py" root))
    (deepacp-test--edit "tidy")
    (deepacp-test--code-action 2 "deepacp: Accept this hunk")
    (deepacp-test--note 'after_hunk (deepacp-test--text))
    (deepacp-test--note 'hunk_message (deepacp-test--said "did not apply"))
    (setq deepacp-test--answer nil)     ; "n" to deepacp-accept
    (deepacp-test--accept)
    (deepacp-test--note 'declined (deepacp-test--said "not saved yet" "did not apply"
                                                      "nothing accepted" "deepacp: Internal"))
    (deepacp-test--note 'after_decline (deepacp-test--text))
    (setq deepacp-test--answer t)
    (deepacp-test--accept)
    (deepacp-test--note 'accepted (deepacp-test--said "not saved yet" "did not apply"
                                                      "nothing accepted" "deepacp: Internal"))
    (deepacp-test--note 'asked (reverse deepacp-test--asked))
    (save-some-buffers t)
    (concat "OK " (json-encode deepacp-test--report))))

(condition-case err
    (progn
      (load (getenv "DEEPACP_EMACS_SNIPPET"))
      ;; The user's answer when Emacs asks before applying the server's edit.
      (advice-add 'y-or-n-p :override (lambda (prompt &rest _)
                                        (push prompt deepacp-test--asked)
                                        deepacp-test--answer))
      (deepacp-test--finish
       (funcall (intern (concat "deepacp-test-" (or (getenv "DEEPACP_TEST_SCENARIO")
                                                    "unsaved"))))))
  (error (deepacp-test--finish (format "FAIL: %s\n%s" (error-message-string err)
                                       (deepacp-test--messages)))))
