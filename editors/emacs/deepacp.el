;;; deepacp.el --- deepacp's language server through eglot  -*- lexical-binding: t; -*-

;; Load this file (or copy it into your init) and run `M-x eglot' in a project file.
;; M-x deepacp-edit asks for a change (to the region, if active); the proposal shows as
;; diagnostics and code actions; M-x deepacp-accept / deepacp-reject decide all of it.

(require 'eglot)

(add-to-list 'eglot-server-programs
             '((python-mode python-ts-mode js-mode typescript-mode rust-mode go-mode
                c-mode c++-mode java-mode) . ("deepacp" "lsp")))

;; Show every change the server asks to make as a diff before applying it.
(if (boundp 'eglot-confirm-server-edits)
    (setq eglot-confirm-server-edits 'diff)
  (setq eglot-confirm-server-initiated-edits 'diff))

(defvar deepacp-last-result nil "What the last `deepacp-edit' returned.")

(defun deepacp--command (command arguments &optional then)
  "Run deepacp's COMMAND with ARGUMENTS without blocking Emacs; call THEN with the result."
  (eglot--signal-textDocument/didChange)  ; the server must see what was just typed
  (jsonrpc-async-request
   (eglot--current-server-or-lose) :workspace/executeCommand
   (list :command command :arguments (vconcat arguments))
   :success-fn (or then #'ignore)
   :error-fn (lambda (error) (message "deepacp: %s" (plist-get error :message)))
   :timeout 3600))

(defun deepacp-edit (instruction)
  "Ask deepacp for INSTRUCTION on this file (or the active region)."
  (interactive "sdeepacp: ")
  (let ((args (list :uri (eglot--path-to-uri (buffer-file-name)) :instruction instruction)))
    (when (use-region-p)
      (setq args (plist-put args :range
                            (list :start (list :line (1- (line-number-at-pos (region-beginning))) :character 0)
                                  :end (list :line (1- (line-number-at-pos (region-end))) :character 0)))))
    (message "deepacp: working on it...")
    ;; The server tells the user how the edit went (window/showMessage).
    (deepacp--command "deepacp.edit" (list args)
                      (lambda (result) (setq deepacp-last-result result)))))

(defun deepacp-accept ()
  "Accept the whole last proposal (the editor applies it, showing the diff first)."
  (interactive)
  (deepacp--command "deepacp.acceptProposal" (list (plist-get deepacp-last-result :proposal))))

(defun deepacp-reject ()
  "Reject the last proposal."
  (interactive)
  (deepacp--command "deepacp.rejectProposal" (list (plist-get deepacp-last-result :proposal))))

(provide 'deepacp)
;;; deepacp.el ends here
