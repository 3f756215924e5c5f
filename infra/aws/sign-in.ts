/**
 * Who can sign in to the settings page: by default an Amazon Cognito user pool with managed
 * login, made here (self sign-up off: the operator's `user create` invites each user); or an
 * existing OpenID provider named in the stack settings. Either way the page uses the
 * authorization code flow with PKCE, and API Gateway's JWT authorizer checks the access tokens.
 *
 * A Cognito access token carries no e-mail address; the settings API asks Cognito's userinfo
 * endpoint for it (the page asks for the `openid email` scopes), see functions/me/identity.ts.
 */
import { Aws, Duration, Fn, RemovalPolicy } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AccountRecovery,
  CfnManagedLoginBranding,
  FeaturePlan,
  ManagedLoginVersion,
  Mfa,
  OAuthScope,
  UserPool,
  UserPoolClientIdentityProvider,
} from 'aws-cdk-lib/aws-cognito';
import { API_ROUTES } from '../../functions/shared/http/api-routes';
import type { StackSettings } from './settings';

export interface SignIn {
  readonly issuer: string;
  /** The page's client: the audience the JWT authorizer accepts. */
  readonly clientId: string;
  readonly logoutUrl: string | undefined;
  /** Origins the page fetches from: the issuer's, and its token endpoint's. */
  readonly connectOrigins: readonly string[];
  /** The stack's own user pool, when it made one (`user create` adds users to it). */
  readonly userPool: UserPool | undefined;
}

/** `https://<api>/settings`, and the same on the custom domain when there is one. */
export function settingsPageUrls(api: HttpApi, settings: StackSettings): string[] {
  const path = API_ROUTES.settingsPage.path;
  return [`${api.apiEndpoint}${path}`, ...(settings.customDomain ? [`https://${settings.customDomain.domainName}${path}`] : [])];
}

export function addSignIn(stack: Stack, api: HttpApi, settings: StackSettings): SignIn {
  const { signIn } = settings;
  if (signIn.kind === 'external') {
    return { issuer: signIn.issuer, clientId: signIn.clientId, logoutUrl: signIn.logoutUrl, connectOrigins: [signIn.issuer, ...signIn.connectOrigins], userPool: undefined };
  }
  const pages = settingsPageUrls(api, settings);
  const userPool = new UserPool(stack, 'UserPool', {
    // Only the operator adds users (`user create` invites them by e-mail with a temporary password).
    selfSignUpEnabled: false,
    signInAliases: { email: true },
    autoVerify: { email: true },
    standardAttributes: { email: { required: true, mutable: true } },
    accountRecovery: AccountRecovery.EMAIL_ONLY,
    passwordPolicy: { minLength: 12, requireLowercase: true, requireUppercase: true, requireDigits: true, requireSymbols: true, tempPasswordValidity: Duration.days(7) },
    mfa: Mfa.OPTIONAL,
    mfaSecondFactor: { otp: true, sms: false },
    featurePlan: FeaturePlan.ESSENTIALS,
    userInvitation: {
      emailSubject: 'Your access to the email API settings page',
      emailBody: `You can now get your own API key for the email API. Sign in at ${pages[0]} with the user name {username} and the temporary password {####}; you will choose your own password.`,
    },
    // The pool holds every user's sign-in; like the table, neither a stack deletion nor a stray
    // console click may remove it.
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  // Prefixes are unique per region across all AWS accounts; the stack id's first block makes one.
  const domainPrefix = signIn.domainPrefix ?? Fn.join('-', ['email-api', Fn.select(0, Fn.split('-', Fn.select(2, Fn.split('/', Aws.STACK_ID))))]);
  const domain = userPool.addDomain('SignInDomain', { cognitoDomain: { domainPrefix }, managedLoginVersion: ManagedLoginVersion.NEWER_MANAGED_LOGIN });
  const client = userPool.addClient('SettingsPageClient', {
    // A browser app keeps no secret: PKCE protects its code exchange.
    generateSecret: false,
    authFlows: { userSrp: true },
    oAuth: { flows: { authorizationCodeGrant: true }, scopes: [OAuthScope.OPENID, OAuthScope.EMAIL], callbackUrls: pages, logoutUrls: pages },
    supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
    preventUserExistenceErrors: true,
    accessTokenValidity: Duration.hours(1),
    idTokenValidity: Duration.hours(1),
    refreshTokenValidity: Duration.days(1),
    enableTokenRevocation: true,
  });
  // Managed login shows its pages for a client only once the client has a style.
  new CfnManagedLoginBranding(stack, 'SignInBranding', { userPoolId: userPool.userPoolId, clientId: client.userPoolClientId, useCognitoProvidedValues: true });

  return {
    issuer: userPool.userPoolProviderUrl,
    clientId: client.userPoolClientId,
    // Cognito ends its session at /logout, which its discovery document does not name.
    logoutUrl: `${domain.baseUrl()}/logout?client_id=${client.userPoolClientId}&logout_uri=${pages[0]}`,
    connectOrigins: [`https://cognito-idp.${Aws.REGION}.${Aws.URL_SUFFIX}`, domain.baseUrl()],
    userPool,
  };
}
